import { describe, expect, it } from 'vitest';
import { searchWords, snippet } from './search-text';

const marked = (body: string, q: string, width?: number) =>
  snippet(body, searchWords(q), width)
    .map((p) => (p.hit ? `[${p.text}]` : p.text))
    .join('');

describe('the words of a search', () => {
  it('reads letters and digits as words, lowercased, and nothing else as syntax', () => {
    expect(searchWords('Refund "NEAR" (invoice) AND zebra-4411')).toEqual(['refund', 'near', 'invoice', 'and', 'zebra', '4411'].map((text) => ({ text, prefix: false })));
    expect(searchWords('"" * - : ^ {} \\ \'')).toEqual([]);
    expect(searchWords('   ')).toEqual([]);
  });

  it('takes a trailing star as a prefix, from 2 characters', () => {
    expect(searchWords('refu* a* x')).toEqual([
      { text: 'refu', prefix: true },
      { text: 'a', prefix: false },
      { text: 'x', prefix: false },
    ]);
  });

  it('keeps letters of every script, drops repeats, and bounds the count and length', () => {
    expect(searchWords('Größe größe café 東京')).toEqual(['größe', 'café', '東京'].map((text) => ({ text, prefix: false })));
    expect(searchWords(Array.from({ length: 30 }, (_, i) => `w${i}`).join(' '))).toHaveLength(12);
    expect(searchWords('y'.repeat(500))[0]!.text).toHaveLength(64);
  });
});

describe('the snippet of a hit', () => {
  it('marks each word searched for, whatever its case or accents', () => {
    expect(marked('Dear customer, the Refund for the CAFÉ is on its way.', 'refund cafe')).toBe('Dear customer, the [Refund] for the [CAFÉ] is on its way.');
  });

  it('marks words that start with a prefix, and not words that only contain it', () => {
    expect(marked('refunds and refunded, not prerefund', 'refund*')).toBe('[refunds] and [refunded], not prerefund');
  });

  it('shows the text around the first match of a long body, cut at words, with ellipses', () => {
    const body = `${'lorem ipsum '.repeat(40)}the walrus subscription renewed twice ${'dolor sit '.repeat(40)}`;
    const s = marked(body, 'walrus', 80);
    expect(s.startsWith('…')).toBe(true);
    expect(s.endsWith('…')).toBe(true);
    expect(s).toContain('[walrus] subscription');
    expect(s.length).toBeLessThanOrEqual(84);
    expect(s).not.toMatch(/…\S*ipsu\b|…psum/); // not cut inside a word
  });

  it('shows the start of the body when no word of it matches, and keeps whitespace to single spaces', () => {
    expect(marked('line one\n\n  line two', 'absent')).toBe('line one line two');
  });
});
