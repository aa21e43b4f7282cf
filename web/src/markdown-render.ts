/**
 * Finding text as reviewers write it: Markdown (`**Fix:**`, backticks, lists, code blocks),
 * rendered by marked and sanitised by DOMPurify, since the text comes from reviewers and models
 * that read untrusted repositories. No raw HTML survives but the formatting marked produces.
 * Loaded by ./markdown.tsx on first use, so the first page does not carry either library.
 */
import DOMPurify from 'dompurify';
import { marked } from 'marked';

const ALLOWED_TAGS = [
  'p',
  'br',
  'strong',
  'em',
  'del',
  'code',
  'pre',
  'ul',
  'ol',
  'li',
  'blockquote',
  'a',
  'h3',
  'h4',
  'h5',
  'h6',
  'hr',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
];

/** Markdown to safe HTML: links keep only http(s) and mailto targets and open nothing new. */
export function markdownToHtml(text: string): string {
  const html = marked.parse(text, { async: false, gfm: true, breaks: false }) as string;
  return DOMPurify.sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR: ['href', 'title'],
    ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,
  });
}
