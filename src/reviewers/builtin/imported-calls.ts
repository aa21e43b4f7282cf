/**
 * Findings at calls of helpers imported from another file of the repository (issue 24.2, one import
 * deep): `const { run } = require('./utils')` where `run`'s parameter reaches a shell sink in
 * utils.js makes `run('git log ' + req.query.ref)` the place the change brings the injection in.
 * The engine reads the imported modules and summarises their exported helpers (./imported-helpers.ts);
 * here, in the importing file's own matching (main thread or analysis thread alike), the calls of
 * those helpers with non-constant arguments on changed lines are reported, also through the
 * file's own functions. JavaScript, TypeScript and Python.
 */
import type { SgNode } from '@ast-grep/napi';
import type { FindingDraft, Severity } from '../../core/review';
import { callersOfImported } from './flow/javascript-callers';
import { pythonCallersOfImported } from './flow/python-callers';
import { pythonImportBindings } from './flow/python-modules';
import type { HelperCall } from './flow/types';
import type { ParsedFile } from './languages';
import { matchKey } from './preexisting';

/** An exported helper of another file whose parameter reaches a sink there: plain data, so it crosses to an analysis thread. */
export interface ImportedSink {
  /** How the importing file names the module (`./utils`). */
  specifier: string;
  /** The export (`run`, or `default`). */
  exported: string;
  /** The parameter's position, and whether it is `...rest`. */
  index: number;
  rest: boolean;
  /** From the exported function to the one holding the sink, in the other file. */
  through: HelperCall['through'];
  /** The module's path in the repository, and the sink's line and text there. */
  path: string;
  sinkLine: number;
  sinkText: string;
  /** The rule that matched the sink, and its message and note as filled in there. */
  ruleId: string;
  severity: Severity;
  category: string;
  title: string;
  note: string;
}

const JS_LANGUAGES = new Set(['javascript', 'typescript', 'tsx']);

const excerpt = (text: string): string => {
  const line = text.split('\n')[0] ?? '';
  return line.length > 60 ? `${line.slice(0, 57)}...` : line;
};

/** A finding at a call and its match key (./preexisting.ts). */
export interface ImportedCallFinding {
  finding: FindingDraft;
  key: string;
  /** The call's 1-based line span, for de-duplication with the file's other findings. */
  start: number;
  end: number;
}

/** The findings at changed calls of `sinks` in this file. */
export function importedCallFindings(
  path: string,
  parsed: ParsedFile,
  sinks: readonly ImportedSink[],
  reviewer: string,
  firstChangedLine: (start: number, end: number) => number | null,
): ImportedCallFinding[] {
  const python = parsed.language === 'python';
  if (!(JS_LANGUAGES.has(parsed.language) || python) || sinks.length === 0) return [];
  const root = parsed.root.root();
  const bindings = python ? pythonImportBindings(root) : [];
  const found: ImportedCallFinding[] = [];
  for (const sink of sinks) {
    const reaches = python
      ? pythonCallersOfImported(root, sink, bindings, parsed)
      : callersOfImported(root, sink, parsed);
    for (const reach of reaches) {
      const range = reach.call.range();
      const start = range.start.line + 1;
      const end = range.end.line + 1;
      const line = firstChangedLine(start, end);
      if (line === null) continue;
      found.push({
        finding: {
          severity: sink.severity,
          path,
          line,
          endLine: Math.max(line, end),
          title: `${sink.title}, through \`${sink.exported === 'default' ? calleeText(reach.call) : sink.exported}()\` of ${sink.path}`,
          body: `${describe(reach, sink)}\n\n${sink.note}`,
          rule: sink.ruleId,
          category: sink.category,
          reviewer,
        },
        key: matchKey(sink.ruleId, reach.call.text()),
        start,
        end,
      });
    }
  }
  return found;
}

function calleeText(call: SgNode): string {
  return excerpt(call.field('function')?.text() ?? '');
}

/** Where the value goes: this file's helpers (if any), then the imported one, to the sink's line there. */
function describe(reach: HelperCall, sink: ImportedSink): string {
  const local = reach.through.slice(0, reach.through.length - sink.through.length);
  const steps = [...local, ...sink.through]
    .map((t) => `\`${t.helper}()\` (\`${t.parameter}\`)`)
    .join(', then ');
  return (
    `This call passes \`${excerpt(reach.argument.text())}\`, not a constant, to ${steps}, which reaches ` +
    `\`${sink.sinkText}\` at ${sink.path}:${sink.sinkLine}.`
  );
}
