// A note's markdown as the run page renders it: whoever wrote it, nothing in it runs, loads or
// leaks the page's address (the note renderer, components/notes/note-markdown.tsx).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { NoteMarkdown } from '@/components/notes/note-markdown';

const html = (body: string) => renderToStaticMarkup(createElement(NoteMarkdown, { body }));

describe('a note rendered as markdown', () => {
  it('renders emphasis, lists, code and GitHub tables', () => {
    const out = html('**bold** _it_ `x<y`\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |');
    expect(out).toContain('<strong>bold</strong>');
    expect(out).toContain('<em>it</em>');
    expect(out).toContain('<code>x&lt;y</code>');
    expect(out).toContain('<li>one</li>');
    expect(out).toContain('<td>2</td>');
  });

  it('shows raw HTML as text: no script, no element with a handler', () => {
    const out = html('<script>alert(1)</script>\n\nhi <img src=x onerror="alert(2)"> <b onclick="x()">b</b>\n\n<iframe src="https://evil.example"></iframe>');
    expect(out).not.toMatch(/<(script|img|iframe|b)[\s>]/);
    expect(out).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(out).toContain('&lt;img src=x onerror=&quot;alert(2)&quot;&gt;');
  });

  it('links open apart with no referrer; a javascript: link loses its URL; an image is a link, never fetched', () => {
    const out = html('[docs](https://example.com/a) https://example.com/auto [bad](javascript:alert(1)) ![chart](https://example.com/c.png)');
    expect(out).toContain('<a href="https://example.com/a" target="_blank" rel="noopener noreferrer nofollow">docs</a>');
    expect(out).toContain('<a href="https://example.com/auto" target="_blank" rel="noopener noreferrer nofollow">');
    expect(out).not.toContain('javascript:');
    expect(out).not.toContain('<img');
    expect(out).toContain('<a href="https://example.com/c.png" target="_blank" rel="noopener noreferrer nofollow" class="note-image-link">image: chart</a>');
  });
});
