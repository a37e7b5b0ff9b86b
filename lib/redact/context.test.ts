// Issue 11: the full IIN table, the context rule for cards and phones, phone extensions and
// labels, negative words, and the reach a streaming redactor must keep (DESIGN: "Redaction").
import { describe, expect, it } from 'vitest';
import { CARD_REACH } from './card';
import { CTX_CARD, CTX_NEGATIVE, CTX_PHONE, contextBefore } from './context';
import { createStreamRedactor, DETECTOR_REACH, detectPii, redact } from './index';
import { PHONE_REACH } from './phone';

type Case = readonly [input: string, expected: string];

/** `body` (digits, without the check digit) with its Luhn check digit. */
function luhn(body: string): string {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let v = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) v = v * 2 > 9 ? v * 2 - 9 : v * 2;
    sum += v;
  }
  return body + String((10 - (sum % 10)) % 10);
}

const JCB15_1800 = luhn('18001234567890');
const JCB15_2131 = luhn('21311234567890');
const MAESTRO12 = luhn('50181234567');
const OUTSIDE_3521 = luhn('352112345678901');
const OUTSIDE_3598 = luhn('359812345678901');

describe("cards: the issue's misses", () => {
  const cases: Case[] = [
    // 15-digit JCB and 12-digit Maestro are real networks: no context needed
    [`paid with ${JCB15_1800}`, 'paid with <CARD>'],
    [`paid with ${JCB15_2131}`, 'paid with <CARD>'],
    [`${JCB15_1800.slice(0, 4)} ${JCB15_1800.slice(4, 10)} ${JCB15_1800.slice(10)}`, '<CARD>'],
    [`paid with ${MAESTRO12}`, 'paid with <CARD>'],
    [`${MAESTRO12.slice(0, 4)} ${MAESTRO12.slice(4, 8)} ${MAESTRO12.slice(8)}`, '<CARD>'],
    // outside every IIN: a card only after a card word
    [`card ${OUTSIDE_3521}`, 'card <CARD>'],
    [`cc ${OUTSIDE_3598}`, 'cc <CARD>'],
    [`credit card: ${OUTSIDE_3521.replace(/(\d{4})(?=\d)/g, '$1 ')}`, 'credit card: <CARD>'],
    [`Credit card number ${OUTSIDE_3598.replace(/(\d{4})(?=\d)/g, '$1-')}.`, 'Credit card number <CARD>.'],
    [`Kreditkarte: ${OUTSIDE_3521}`, 'Kreditkarte: <CARD>'],
    [`Kartennummer ${OUTSIDE_3598}`, 'Kartennummer <CARD>'],
    [`carte bancaire : ${OUTSIDE_3521}`, 'carte bancaire : <CARD>'],
    [`Mi tarjeta ${OUTSIDE_3598} fue cargada`, 'Mi tarjeta <CARD> fue cargada'],
    [`Återbetala till kortet ${OUTSIDE_3521}, tack.`, 'Återbetala till kortet <CARD>, tack.'],
    [`cc ${luhn('06041234567')}`, 'cc <CARD>'], // a generator's 12-digit "0604" Maestro
    // the same numbers without a card word stay: nothing says they are cards
    [`id ${OUTSIDE_3521}`, `id ${OUTSIDE_3521}`],
    [`${OUTSIDE_3598}`, `${OUTSIDE_3598}`],
    [`card ${OUTSIDE_3521.slice(0, 15)}${(Number(OUTSIDE_3521[15]) + 1) % 10}`, `card ${OUTSIDE_3521.slice(0, 15)}${(Number(OUTSIDE_3521[15]) + 1) % 10}`], // Luhn fails
  ];
  it.each(cases)('%j', (input, expected) => expect(redact(input)).toBe(expected));
});

describe('cards: the IIN table', () => {
  const real: [string, string][] = [
    ['Mir 2200', luhn('220012345678901')],
    ['Mir 19', luhn('220412345678901234')],
    ['BORICA', luhn('220512345678901')],
    ['UATP', luhn('12345678901234')],
    ['UnionPay 19', luhn('621234567890123456')],
    ['RuPay 81', luhn('811234567890123')],
    ['Troy', luhn('979212345678901')],
    ['Humo', luhn('986012345678901')],
    ['Napas 19', luhn('970412345678901234')],
    ['Uzcard', luhn('860012345678901')],
    ['Verve', luhn('506099123456789')],
    ['LankaPay', luhn('357111123456789')],
    ['Elo 509', luhn('509012345678901')],
    ['Dankort', luhn('501912345678901')],
    ['Maestro UK 676770 (12)', luhn('67677012345')],
    ['China T-Union', luhn('311234567890123456')],
    ['Diners enRoute 2014', luhn('20141234567890')],
  ];
  it.each(real)('%s is a card without context', (_name, number) => expect(redact(`x ${number} y`)).toBe('x <CARD> y'));

  const wrongLength: [string, string][] = [
    ['Mastercard is 16 digits, not 19', luhn('511111111111111111')],
    ['Amex is 15 digits, not 16', luhn('371234567890123')],
    ['UATP is 15 digits, not 13 (a millisecond timestamp)', luhn('173288640000')],
    ['no network at 12 digits under 6306', luhn('63061234567')],
    ['Visa is 13, 16 or 19 digits, not 14', luhn('4111111111111')],
    ['nothing starts with 7', luhn('711111111111111')],
  ];
  it.each(wrongLength)('%s', (_name, number) => expect(redact(`x ${number} y`)).toBe(`x ${number} y`));

  it('a "+" before the digits makes them a phone, not a card', () => {
    expect(redact('Fax +49841793302571')).toBe('Fax <PHONE>');
  });
});

describe("phones: the issue's misses", () => {
  const cases: Case[] = [
    ['Phone:\n467 3395', 'Phone:\n<PHONE>'],
    ['Can someone call me on 9472 7916? I have some questions.', 'Can someone call me on <PHONE>? I have some questions.'],
    ['Mobile: 723 813 266', 'Mobile: <PHONE>'],
    ['(37) 788-063', '<PHONE>'],
    ['259.735.7502x459', '<PHONE>'],
    ['Tel 60-56-85-91', 'Tel <PHONE>'],
    ["They're not answering at 71-33-52-22", "They're not answering at <PHONE>"],
    ['Office: 21 253 109 8211-Office', 'Office: <PHONE>-Office'],
  ];
  it.each(cases)('%j', (input, expected) => expect(redact(input)).toBe(expected));
});

describe('phones: context words, extensions, labels', () => {
  const cases: Case[] = [
    ['my number is 94727916', 'my number is <PHONE>'],
    ['Mon numéro est le 06 12 34 56 78', 'Mon numéro est le <PHONE>'],
    ['Telefonnummer: 0170 1234567', 'Telefonnummer: <PHONE>'],
    ['Handy 170 1234567', 'Handy <PHONE>'],
    ['Tel. Nr. 467 3395', 'Tel. Nr. <PHONE>'],
    ['Call Anna on 9472 7916 tomorrow', 'Call <PHONE> tomorrow'.replace('<PHONE>', 'Anna on <PHONE>')],
    ['Llame a José Emilio al 913 00 98 45', 'Llame a José Emilio al <PHONE>'],
    ['Numer kontaktowy: 86 283 08 42', 'Numer kontaktowy: <PHONE>'],
    ['WhatsApp 612 34 56 78', 'WhatsApp <PHONE>'],
    ['Puede llamarme al 904.221.065?', 'Puede llamarme al <PHONE>?'],
    ['Pod numerem 16-067-66-08 nikt nie odbiera', 'Pod numerem <PHONE> nikt nie odbiera'],
    ['(551) 389-3688 x0018', '<PHONE>'],
    ['415-555-0132 ext. 12', '<PHONE>'],
    ['415 555 0132 x 7', '<PHONE>'],
    ['Fax: 0800 936 8800', 'Fax: <PHONE>'],
    ['018049 56368', '<PHONE>'], // UK six-digit area code
    ['(0703) 101335462', '<PHONE>'], // 13 digits with a trunk 0
  ];
  it.each(cases)('%j', (input, expected) => expect(redact(input)).toBe(expected));
});

describe('phones: what stays', () => {
  const cases: Case[] = [
    // no phone word: a bare group is ambiguous
    ['467 3395', '467 3395'],
    ['9472 7916', '9472 7916'],
    ['723 813 266', '723 813 266'],
    ['60-56-85-91', '60-56-85-91'],
    // a negative word wins over a phone-shaped format
    ['Order 0612345678', 'Order 0612345678'],
    ['Order number 9472 7916', 'Order number 9472 7916'],
    ['Invoice 415-555-0132', 'Invoice 415-555-0132'],
    ['invoice no. 723 813 266', 'invoice no. 723 813 266'],
    ['ref 030 1234567', 'ref 030 1234567'],
    ['Tracking: 9400 1112 0202 3344 5566 77', 'Tracking: 9400 1112 0202 3344 5566 77'],
    ['tracking number 4371 5462 3136 7405 1234 56', 'tracking number 4371 5462 3136 7405 1234 56'],
    ['Customer no. 0170 1234567', 'Customer no. 0170 1234567'],
    ['Bestellnummer 0612345678', 'Bestellnummer 0612345678'],
    ['Sendungsnummer 00340434161094042557', 'Sendungsnummer 00340434161094042557'],
    ['Ordine n. 002-2516074-4830777', 'Ordine n. 002-2516074-4830777'],
    ['ISBN 978-3-16-148410-0', 'ISBN 978-3-16-148410-0'],
    // "number" alone is no phone word: a model's answer
    ['The number is 4155550132.', 'The number is 4155550132.'],
    ['The answer is 12 345 678.', 'The answer is 12 345 678.'],
    ['number of requests 1234567', 'number of requests 1234567'],
    // dates, times, versions, amounts, UUIDs, coordinates after a phone word
    ['Call me on 2024-01-15 at 10:30', 'Call me on 2024-01-15 at 10:30'],
    ['call me on 15.01.2024', 'call me on 15.01.2024'],
    ['Phone: 12:34:56', 'Phone: 12:34:56'],
    ['Mobile app version 10.4.12', 'Mobile app version 10.4.12'],
    ['phone 1.2.3.4567', 'phone 1.2.3.4567'],
    ['Kontakt: 1.234.567,89 €', 'Kontakt: 1.234.567,89 €'],
    ['call 550e8400-e29b-41d4-a716-446655440000', 'call 550e8400-e29b-41d4-a716-446655440000'],
    ['phone 12345678-1234-1234-1234-123456789012', 'phone 12345678-1234-1234-1234-123456789012'],
    ['Office at 48.8566, 2.3522', 'Office at 48.8566, 2.3522'],
    ['call 1732886400000', 'call 1732886400000'], // 13 digits: a timestamp, no phone
    ['phone 01.02.03.004', 'phone 01.02.03.004'],
    ['Call 12345678-abcd', 'Call 12345678-abcd'], // a hex tail is no "-Office" label
    ['Call 123456', 'Call 123456'], // six digits are too few
  ];
  it.each(cases)('%j', (input, expected) => expect(redact(input)).toBe(expected));
});

describe('contextBefore', () => {
  const at = (s: string) => contextBefore(s, s.length);
  it('reads the nearest deciding word', () => {
    expect(at('call me on ')).toBe(CTX_PHONE);
    expect(at('Credit card: ')).toBe(CTX_CARD);
    expect(at('Order ')).toBe(CTX_NEGATIVE);
    expect(at('Order number ')).toBe(CTX_NEGATIVE);
    expect(at('Phone number ')).toBe(CTX_PHONE);
    expect(at('my number is ')).toBe(CTX_PHONE);
    expect(at('the number is ')).toBe(0);
    expect(at('Invoice sent; call me on ')).toBe(CTX_PHONE);
    expect(at('Rechnungsnummer ')).toBe(CTX_NEGATIVE);
    expect(at('Mobilnummer: ')).toBe(CTX_PHONE);
  });
  it('stops at a digit, a blank line, an unknown word, or the window', () => {
    expect(at('call 12 ')).toBe(0);
    expect(at('Phone:\n\n')).toBe(0);
    expect(at('Phone:\n')).toBe(CTX_PHONE);
    expect(at('phone costs ')).toBe(0);
    expect(at(`phone${' '.repeat(60)}`)).toBe(0);
    expect(at(`${'x'.repeat(30)}phone `)).toBe(0); // one long word, not "phone"
  });
});

describe('reach: what a streaming redactor must keep', () => {
  // A match must be decided by the text within its detector's reach: cutting the text just
  // before the reach changes nothing (the streaming redactor keeps DETECTOR_REACH.before as context).
  const inputs = [
    `Can someone please, please call me on ${' '.repeat(10)}9472 7916`,
    'tracking number 4371 5462 3136 7405 1234 56 and more',
    `Kreditkarte: ${OUTSIDE_3521}`,
    'Order  number   is:   0612345678',
    `${'pad '.repeat(20)}Phone:\n467 3395 x 12`,
  ];
  it.each(inputs)('%j', (text) => {
    for (const s of detectPii(text)) {
      const reach = s.kind === 'card' ? CARD_REACH : s.kind === 'phone' ? PHONE_REACH : DETECTOR_REACH;
      const from = Math.max(0, s.start - reach.before);
      const cut = detectPii(text.slice(from)).map((t) => ({ ...t, start: t.start + from, end: t.end + from }));
      expect(cut).toContainEqual(s);
    }
  });

  it('a streamed text, cut anywhere, is redacted as the whole text', () => {
    const text = [
      'Hello, can someone call me on 9472 7916? My card 3521 0177 4269 8051 was charged.',
      `Order number 0612345678, tracking number 4371 5462 3136 7405 1234 56, cc ${OUTSIDE_3598}.`,
      "They're not answering at 71-33-52-22. Phone:\n467 3395 or 259.735.7502x459.",
      `${'filler text with no numbers at all, '.repeat(3)}Mobile: 723 813 266 and Kreditkarte: ${OUTSIDE_3521}`,
    ].join('\n');
    const whole = redact(text);
    for (const size of [1, 2, 3, 7, 13, 40, 81, 97]) {
      const r = createStreamRedactor();
      let out = '';
      for (let i = 0; i < text.length; i += size) {
        r.push(text.slice(i, i + size));
        out += r.take();
      }
      expect(out + r.end()).toBe(whole);
    }
  });

  it('keeps the context words inside the streaming context', () => {
    expect(DETECTOR_REACH.before).toBeGreaterThanOrEqual(CARD_REACH.before);
    expect(DETECTOR_REACH.before).toBeGreaterThanOrEqual(PHONE_REACH.before);
    expect(DETECTOR_REACH.after).toBeGreaterThanOrEqual(PHONE_REACH.after);
  });
});

describe('context on adversarial input', () => {
  const MB = 1 << 20;
  const fill = (unit: string) => unit.repeat(Math.ceil(MB / unit.length)).slice(0, MB);
  // Speed is the benchmark's job; here each input must come back whole.
  it.each([
    ['call 1 ', fill('call 1 ')],
    ['phone 12 ', fill('phone 12 ')],
    ['card 4111 ', fill('card 4111 ')],
    ['Order 0612345678 ', fill('Order 0612345678 ')],
    ['12 12 12 ', fill('12 12 12 ')],
    ['12-', fill('12-')],
    ['(12) ', fill('(12) ')],
    ['number my ', fill('number my ')],
  ])('%s × 1 MB', (_name, input) => {
    const out = redact(input);
    expect(out.replace(/<(EMAIL|IBAN|CARD|PHONE|IP)>/g, '').length).toBeLessThanOrEqual(input.length);
  });
});
