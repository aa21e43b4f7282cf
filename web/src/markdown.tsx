/**
 * Finding text as Markdown. The renderer (./markdown-render.ts: marked and DOMPurify) loads on
 * the first page that shows a finding, not with the console: until it arrives the text shows as
 * written.
 */
import { useEffect, useState } from 'preact/hooks';

let render: ((text: string) => string) | null = null;
let loading: Promise<void> | null = null;

function loadRenderer(): Promise<void> {
  loading ??= import('./markdown-render').then((m) => {
    render = m.markdownToHtml;
  });
  return loading;
}

export function Markdown({ text }: { text: string }) {
  const [, setReady] = useState(render !== null);
  useEffect(() => {
    if (!render)
      loadRenderer().then(
        () => setReady(true),
        () => {},
      );
  }, []);
  if (!render)
    return (
      <div class="md">
        <p class="prose">{text}</p>
      </div>
    );
  // Sanitised by DOMPurify in markdownToHtml.
  return <div class="md" dangerouslySetInnerHTML={{ __html: render(text) }} />;
}
