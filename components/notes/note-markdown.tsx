'use client';
// A note's text as markdown (GitHub's flavour: tables, task lists, strikethrough, autolinks), safe
// to show whoever wrote it: raw HTML is shown as the text it is (react-markdown never renders it
// without rehype-raw, which is not used), javascript: and other unsafe URLs are dropped by its
// default urlTransform, links open apart with no referrer, and no image is fetched from elsewhere
// (the CSP allows none): an image is shown as a link to it.
import Markdown, { type Components } from 'react-markdown';
import remarkGfm from 'remark-gfm';

const REL = 'noopener noreferrer nofollow';

const components: Components = {
  a: ({ node: _, ...props }) => <a {...props} target="_blank" rel={REL} />,
  img: ({ src, alt }) =>
    typeof src === 'string' && src ? (
      <a href={src} target="_blank" rel={REL} className="note-image-link">
        image: {alt || src}
      </a>
    ) : (
      <span className="muted">image: {alt}</span>
    ),
};

export function NoteMarkdown({ body }: { body: string }) {
  return (
    <div className="note-body" data-testid="note-body">
      <Markdown remarkPlugins={[remarkGfm]} components={components}>
        {body}
      </Markdown>
    </div>
  );
}
