// The words of a history search and the snippet a hit shows (DESIGN: The dashboard, "Short run ids
// and search"). The user's text is read as words — runs of letters and digits, as SQLite's FTS5
// tokenizer reads the stored text — never as query syntax, so quotes, operators, NEAR or a stray
// `*` cannot break a search. A word ending in `*` matches as a prefix. Pure: the query, the page
// and the CLI share it.

export interface SearchWord {
  /** lowercased letters and digits */
  text: string;
  /** the user wrote `word*`: any word starting with it matches */
  prefix: boolean;
}

/** more words than this are dropped: a search is a few words, not a document */
export const SEARCH_WORDS_MAX = 12;
/** a longer word is cut (no stored word is this long outside of ids and hashes) */
export const SEARCH_WORD_MAX = 64;
/** `a*` would expand to most of the index: a prefix needs this many characters, else the word matches whole */
export const SEARCH_PREFIX_MIN = 2;

// FTS5's unicode61 tokenizer: letters, numbers and private-use characters make words; the rest separates
const WORD = /([\p{L}\p{N}\p{Co}]+)(\*?)/gu;

/** The words of `q`, in order, without repeats; empty when there is nothing to search for. */
export function searchWords(q: string): SearchWord[] {
  const out: SearchWord[] = [];
  for (const m of q.matchAll(WORD)) {
    const text = m[1]!.toLowerCase().slice(0, SEARCH_WORD_MAX);
    if (!fold(text)) continue;
    const prefix = m[2] === '*' && text.length >= SEARCH_PREFIX_MIN;
    if (out.some((w) => w.text === text && w.prefix === prefix)) continue;
    out.push({ text, prefix });
    if (out.length === SEARCH_WORDS_MAX) break;
  }
  return out;
}

/** case and accents aside, as the tokenizer compares words (`Café` = `cafe`) */
export function fold(s: string): string {
  return s.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
}

/** A piece of a snippet: `hit` pieces are the words searched for, shown marked. */
export interface SnippetPart {
  text: string;
  hit: boolean;
}

/** characters of text a snippet shows around the first word found */
export const SNIPPET_CHARS = 160;

/**
 * The part of `body` a hit shows: about `width` characters around the first word that matches one
 * of `words`, with every matching word marked and `…` where text was cut; the start of the body
 * when no word of it matches (the database's tokenizer may split text differently).
 */
export function snippet(body: string, words: readonly SearchWord[], width = SNIPPET_CHARS): SnippetPart[] {
  const targets = words.map((w) => ({ text: fold(w.text), prefix: w.prefix }));
  const matches = (token: string) => {
    const f = fold(token);
    return targets.some((t) => (t.prefix ? f.startsWith(t.text) : f === t.text));
  };
  let first = -1;
  for (const m of body.matchAll(WORD)) {
    if (matches(m[1]!)) {
      first = m.index;
      break;
    }
  }
  let start = first < 0 ? 0 : Math.max(0, first - Math.floor(width / 3));
  // start on a word, not in its middle
  if (start > 0) {
    const space = body.slice(start, first).search(/\s/);
    if (space >= 0) start += space + 1;
  }
  let end = Math.min(body.length, start + width);
  if (end < body.length) {
    const space = body.slice(Math.max(first, start), end).lastIndexOf(' ');
    if (space > 0 && Math.max(first, start) + space > start + width / 2) end = Math.max(first, start) + space;
  }
  const window = body.slice(start, end).replace(/\s+/g, ' ');
  const parts: SnippetPart[] = [];
  const push = (text: string, hit: boolean) => {
    if (!text) return;
    const last = parts[parts.length - 1];
    if (last && last.hit === hit) last.text += text;
    else parts.push({ text, hit });
  };
  if (start > 0) push('…', false);
  let at = 0;
  for (const m of window.matchAll(WORD)) {
    if (!matches(m[1]!)) continue;
    push(window.slice(at, m.index), false);
    push(m[1]!, true);
    at = m.index + m[1]!.length;
  }
  push(window.slice(at), false);
  if (end < body.length) push('…', false);
  return parts;
}
