/**
 * The catalog reviewers: one per catalog skill, copied into every workspace at start (see
 * ./reviewer-catalog.ts) and used as they are by the database-free `svc review`. Kept apart from
 * the database code so a CLI run loads no ORM.
 */

export interface CatalogReviewer {
  id: string;
  name: string;
  description: string;
  engine: 'builtin' | 'llm';
  skillId: string;
  /** Default pin: `builtin/rules` for rule reviewers, or `<provider>/<model>` for LLM reviewers. */
  modelPin: string;
}

/** The default model of catalog LLM reviewers: SVC_LLM_DEFAULT_MODEL, else a small OpenAI model. */
export const defaultLlmModel = (env: NodeJS.ProcessEnv = process.env) =>
  env.SVC_LLM_DEFAULT_MODEL || 'openai/gpt-4o-mini';

export function catalogReviewers(env: NodeJS.ProcessEnv = process.env): CatalogReviewer[] {
  return [
    {
      id: 'security',
      name: 'Security rules',
      description:
        'Injection, eval, command execution, unsafe deserialization, weak crypto, XSS sinks, SSRF and path traversal (JavaScript, TypeScript, Python, Go, Java).',
      engine: 'builtin',
      skillId: 'security',
      modelPin: 'builtin/rules',
    },
    {
      id: 'correctness',
      name: 'Correctness rules',
      description:
        'Floating promises, empty catch, assignment in condition, unreachable code, leftover debug statements, strings compared by reference; APIs the declared Node, Python or Go version deprecated or removed (JavaScript, TypeScript, Python, Go, Java).',
      engine: 'builtin',
      skillId: 'correctness',
      modelPin: 'builtin/rules',
    },
    {
      id: 'secrets',
      name: 'Secrets',
      description:
        'Credentials committed in the change (secretlint recommended preset with AWS keys, plus Stripe, Cloudflare, Tailscale, GitHub App tokens, Google API keys and short private keys).',
      engine: 'builtin',
      skillId: 'secrets',
      modelPin: 'builtin/rules',
    },
    {
      id: 'general',
      name: 'General review (LLM)',
      description:
        'A model reads the diff for bugs, risky changes and unclear code; needs a configured LLM provider.',
      engine: 'llm',
      skillId: 'general',
      modelPin: defaultLlmModel(env),
    },
  ];
}
