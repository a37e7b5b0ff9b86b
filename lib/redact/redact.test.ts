import { describe, expect, it } from 'vitest';
import { redact, redactMessages, redactText } from '@/lib/redact';

// [input, expected output]. Grouped by detector; each group has positives then negatives.
type Case = readonly [input: string, expected: string];

const EMAIL: Case[] = [
  ['anna@example.com', '<EMAIL>'],
  ['Contact: anna@example.com.', 'Contact: <EMAIL>.'],
  ['(anna@example.com)', '(<EMAIL>)'],
  ['<anna@example.com>', '<<EMAIL>>'],
  ['"anna@example.com"', '"<EMAIL>"'],
  ["'anna@example.com'", "'<EMAIL>'"],
  ['**anna@example.com**', '**<EMAIL>**'],
  ['anna+newsletter@example.com', '<EMAIL>'],
  ['first.last@mail.sub.example.co.uk', '<EMAIL>'],
  ['user_name%dept@example-domain.io', '<EMAIL>'],
  ['ANNA@EXAMPLE.COM', '<EMAIL>'],
  ['info@xn--mnchen-3ya.de', '<EMAIL>'],
  ['info@example.xn--p1ai', '<EMAIL>'],
  ['jürgen@müller.de', '<EMAIL>'],
  ['mailto:anna@example.com', 'mailto:<EMAIL>'],
  ['a@b.co', '<EMAIL>'],
  ['anna@example.com,bob@example.org', '<EMAIL>,<EMAIL>'],
  ['Wait...anna@example.com', 'Wait...<EMAIL>'],
  ['anna@example.com.123', '<EMAIL>.123'],
  ['anna@example.com-', '<EMAIL>-'],
  ['git@github.com:org/repo.git', '<EMAIL>:org/repo.git'],
  ['notes@example.md', '<EMAIL>'],
  ['联系anna@example.com谢谢', '联系<EMAIL>谢谢'],
  ['line1\nanna@example.com\nline3', 'line1\n<EMAIL>\nline3'],
  ['https://user:anna@example.com/path', 'https://user:<EMAIL>/path'],
  // a domain that is an address literal (RFC 5321 4.1.3): the whole address, local part included
  ['user@[10.0.0.1]', '<EMAIL>'],
  ['Mail user@[10.0.0.1].', 'Mail <EMAIL>.'],
  ['<postmaster@[192.168.000.001]>', '<<EMAIL>>'],
  ['postmaster@[192.168.1.01]', '<EMAIL>'],
  ['user@[IPv6:2001:db8::1]', '<EMAIL>'],
  ['user@[ipv6:::1]', '<EMAIL>'],
  ['user@[IPv6:::ffff:192.0.2.1]', '<EMAIL>'],
  ['user@[IPv6:dead::beef]', '<EMAIL>'],
  ['user@[2001:db8::1]', '<EMAIL>'],
  ['user@[10.0.0.256]', 'user@[10.0.0.256]'],
  ['user@[10.0.0.1', 'user@[<IP>'],
  ['user@[IPv6:2001:db8::g]', 'user@[IPv6:2001:db8::g]'],
  ['user@[IPv6:10.0.0.1]', 'user@[IPv6:<IP>]'],
  ['@[10.0.0.1]', '@[<IP>]'],
  ['NSArray *a = @[@"x"];', 'NSArray *a = @[@"x"];'],
  // negatives
  ['logo@2x.png', 'logo@2x.png'],
  ['icon@3x.webp', 'icon@3x.webp'],
  ['react@18.2.0', 'react@18.2.0'],
  ['npm i @scope/pkg@1.2.3', 'npm i @scope/pkg@1.2.3'],
  ['user@localhost', 'user@localhost'],
  ['@example.com', '@example.com'],
  ['name@', 'name@'],
  ['a.@example.com', 'a.@example.com'],
  ['bundle@main.js', 'bundle@main.js'],
  ['anna@example', 'anna@example'],
  ['a@b.c', 'a@b.c'],
  ['anna@@example.com', 'anna@@example.com'],
  ['user@-example.com', 'user@-example.com'],
  ['x@123.456', 'x@123.456'],
  ['+-@example.com', '+-@example.com'],
  ['@mention in a tweet', '@mention in a tweet'],
];

const IBAN: Case[] = [
  ['GB82 WEST 1234 5698 7654 32', '<IBAN>'],
  ['GB82WEST12345698765432', '<IBAN>'],
  ['gb82 west 1234 5698 7654 32', '<IBAN>'],
  ['DE89 3704 0044 0532 0130 00', '<IBAN>'],
  ['DE89-3704-0044-0532-0130-00', '<IBAN>'],
  ['de89370400440532013000', '<IBAN>'],
  ['Pay to FR14 2004 1010 0505 0001 3M02 606.', 'Pay to <IBAN>.'],
  ['(NL91 ABNA 0417 1643 00)', '(<IBAN>)'],
  ['BE68 5390 0754 7034', '<IBAN>'],
  ['IR27 0170 0000 0010 0324 2000 01', '<IBAN>'], // Iran: in the IBAN registry, missing from the first table
  ['NO93 8601 1117 947', '<IBAN>'],
  ['CH93 0076 2011 6238 5295 7', '<IBAN>'],
  ['ES91 2100 0418 4502 0005 1332', '<IBAN>'],
  ['IT60 X054 2811 1010 0000 0123 456', '<IBAN>'],
  ['AT61 1904 3002 3457 3201', '<IBAN>'],
  ['PL61 1090 1014 0000 0712 1981 2874', '<IBAN>'],
  ['MT84 MALT 0110 0001 2345 MTLC AST0 01S', '<IBAN>'],
  ['LC55 HEMM 0001 0001 0012 0012 0002 3015', '<IBAN>'],
  ['RU02 0445 2560 0407 0281 0412 3456 7890 1', '<IBAN>'],
  ['BR18 0036 0305 0000 1000 9795 493C 1', '<IBAN>'],
  ['IBAN:SA0380000000608010167519;', 'IBAN:<IBAN>;'],
  ['iban=DE89370400440532013000&amount=10', 'iban=<IBAN>&amount=10'],
  // negatives
  ['GB82 WEST 1234 5698 7654 33', 'GB82 WEST 1234 5698 7654 33'],
  ['GB82 WEST 1234 5698 7654', 'GB82 WEST 1234 5698 7654'],
  ['GB82WEST1234569876543', 'GB82WEST1234569876543'],
  ['DE8937040044053201300000', 'DE8937040044053201300000'],
  ['XX82 WEST 1234 5698 7654 32', 'XX82 WEST 1234 5698 7654 32'],
  ['XGB82WEST12345698765432', 'XGB82WEST12345698765432'],
  ['GB82 WEST 1234 5698 7654 32X', 'GB82 WEST 1234 5698 7654 32X'],
  ['GB82 WES T123 4569 8765 432', 'GB82 WES T123 4569 8765 432'],
  ['GB82  WEST 1234 5698 7654 32', 'GB82  WEST 1234 5698 7654 32'],
  ['ab12cd34ef56', 'ab12cd34ef56'],
];

const CARD: Case[] = [
  ['4111 1111 1111 1111', '<CARD>'],
  ['4111111111111111', '<CARD>'],
  ['4111-1111-1111-1111', '<CARD>'],
  ['5555 5555 5555 4444', '<CARD>'],
  ['5105105105105100', '<CARD>'],
  ['2223003122003222', '<CARD>'],
  ['378282246310005', '<CARD>'],
  ['3782 822463 10005', '<CARD>'],
  ['371449635398431', '<CARD>'],
  ['6011111111111117', '<CARD>'],
  ['6011 0009 9013 9424', '<CARD>'],
  ['3530111333300000', '<CARD>'],
  ['3566 0020 2036 0505', '<CARD>'],
  ['30569309025904', '<CARD>'],
  ['38520000023237', '<CARD>'],
  ['6200000000000005', '<CARD>'],
  ['6759649826438453', '<CARD>'],
  ['4222222222222', '<CARD>'],
  ['card: 4111-1111-1111-1111.', 'card: <CARD>.'],
  ['4111 1111 1111 1111 123', '<CARD> 123'],
  ['4111111111111111 exp 12/26', '<CARD> exp 12/26'],
  ['{"pan":"5555555555554444"}', '{"pan":"<CARD>"}'],
  // negatives
  ['4111 1111 1111 1112', '4111 1111 1111 1112'],
  ['4111111111111112', '4111111111111112'],
  ['7111111111111114', '7111111111111114'],
  ['8311111111111110', '8311111111111110'],
  ['3111111111111113', '3111111111111113'],
  ['1234567812345670', '1234567812345670'],
  ['5111111111111111119', '5111111111111111119'],
  ['ts 1732886400000', 'ts 1732886400000'],
  ['41111111111111111111', '41111111111111111111'],
  ['4111111111111111a', '4111111111111111a'],
  ['x4111111111111111', 'x4111111111111111'],
  ['pi=3.4111111111111111', 'pi=3.4111111111111111'],
  ['4111-1111-1111-1111-2222', '4111-1111-1111-1111-2222'],
  ['4111 1111-1111 1111', '4111 1111-1111 1111'],
  ['id 123456789012', 'id 123456789012'],
  ['2024 0001 4111 1111 1111 1111', '2024 0001 <CARD>'],
  ['4111 1111 1111 1111 5555 5555 5555 4444', '<CARD> <CARD>'],
  // a numeric dump: after 8 failed starts in one spaced run the rest of the run is not searched
  ['1000 1001 1002 1003 1004 1005 1006 1007 1008 4111 1111 1111 1111', '1000 1001 1002 1003 1004 1005 1006 1007 1008 4111 1111 1111 1111'],
];

const IP: Case[] = [
  ['192.168.1.1', '<IP>'],
  ['from 10.0.0.1:8080', 'from <IP>:8080'],
  ['10.0.0.0/8', '<IP>'],
  ['10.0.0.0/33', '<IP>/33'],
  ['255.255.255.255', '<IP>'],
  ['0.0.0.0', '<IP>'],
  ['Server at 8.8.8.8.', 'Server at <IP>.'],
  ['x=192.168.0.1,', 'x=<IP>,'],
  ['10.0.0.1-10.0.0.5', '<IP>-<IP>'],
  ['see ...1.2.3.4', 'see ...<IP>'],
  ['[2001:db8::1]:443', '[<IP>]:443'],
  ['http://[::1]:3000/', 'http://[<IP>]:3000/'],
  ['::1', '<IP>'],
  ['2001:db8::1', '<IP>'],
  ['2001:0db8:85a3:0000:0000:8a2e:0370:7334', '<IP>'],
  ['2001:db8::/32', '<IP>'],
  ['2001:db8::1/128', '<IP>'],
  ['fe80::1%eth0', '<IP>'],
  ['FE80::1', '<IP>'],
  ['::ffff:192.0.2.1', '<IP>'],
  ['ip:2001:db8::1', 'ip:<IP>'],
  ['reached 2001:db8::1.', 'reached <IP>.'],
  ['addr 2001:db8::1: refused', 'addr <IP>: refused'],
  ['{"ip":"fd00::a1"}', '{"ip":"<IP>"}'],
  ['IPv6:2001:db8::1', 'IPv6:<IP>'],
  ['ipv6:::1', 'ipv6:<IP>'],
  // zero-padded to three digits an octet, as fixed-width tools print them
  ['192.168.000.001', '<IP>'],
  ['192.168.001.001', '<IP>'],
  ['010.000.000.001', '<IP>'],
  ['Server at 192.168.000.001.', 'Server at <IP>.'],
  ['from 010.010.010.010:8080', 'from <IP>:8080'],
  ['[192.168.000.001]:443', '[<IP>]:443'],
  ['010.000.000.000/8', '<IP>'],
  ['192.168.000.000/16', '<IP>'],
  ['255.255.255.000', '<IP>'],
  ['::ffff:192.168.000.001', '<IP>'],
  // negatives
  ['256.1.1.1', '256.1.1.1'],
  ['1.2.3', '1.2.3'],
  ['1.2.3.4.5', '1.2.3.4.5'],
  ['01.02.03.004', '01.02.03.004'],
  ['192.168.01.01', '192.168.01.01'],
  ['192.168.000.256', '192.168.000.256'],
  ['192.168.000.0001', '192.168.000.0001'],
  ['1192.168.000.001', '1192.168.000.001'],
  ['192.168.000.001.002', '192.168.000.001.002'],
  ['host.192.168.000.001', 'host.192.168.000.001'],
  ['1.000.000.000', '1.000.000.000'],
  ['Preis 150.000.000.000 €', 'Preis 150.000.000.000 €'],
  ['Rp 120.100.000.000', 'Rp 120.100.000.000'],
  ['xIPv6:2001:db8::1', 'xIPv6:2001:db8::1'],
  ['v1.2.3.4', 'v1.2.3.4'],
  ['1.2.3.4a', '1.2.3.4a'],
  ['host.1.2.3.4', 'host.1.2.3.4'],
  ['00:1a:2b:3c:4d:5e', '00:1a:2b:3c:4d:5e'],
  ['00:1a:2b:ff:fe:3c:4d:5e', '00:1a:2b:ff:fe:3c:4d:5e'],
  ['std::cout << x;', 'std::cout << x;'],
  ['a::b', 'a::b'],
  ['Foo::Bar::baz()', 'Foo::Bar::baz()'],
  ['u32::MAX', 'u32::MAX'],
  ['12:34:56', '12:34:56'],
  ['li::before { }', 'li::before { }'],
  ['dead::beef', 'dead::beef'],
  ['xs[::2]', 'xs[::2]'],
  ['1:2:3:4:5:6:7', '1:2:3:4:5:6:7'],
  ['1::2::3', '1::2::3'],
  [':: and :::', ':: and :::'],
  ['2001:db8::g', '2001:db8::g'],
  ['at 10:30:00.123Z', 'at 10:30:00.123Z'],
];

const PHONE: Case[] = [
  ['+44 20 7946 0958', '<PHONE>'],
  ['+1-415-555-0132', '<PHONE>'],
  ['0044 20 7946 0958', '<PHONE>'],
  ['(415) 555-0132', '<PHONE>'],
  ['415-555-0132', '<PHONE>'],
  ['06 12 34 56 78', '<PHONE>'],
  ['030 1234567', '<PHONE>'],
  ['+14155550132', '<PHONE>'],
  ['+1 (415) 555-0132', '<PHONE>'],
  ['+49 (0)30 1234567', '<PHONE>'],
  ['415.555.0132', '<PHONE>'],
  ['415 555 0132', '<PHONE>'],
  ['1-415-555-0132', '<PHONE>'],
  ['1 (415) 555-0132', '<PHONE>'],
  ['020 7946 0958', '<PHONE>'],
  ['07700 900123', '<PHONE>'],
  ['0612345678', '<PHONE>'],
  ['(030) 1234567', '<PHONE>'],
  ['(0)30 1234567', '<PHONE>'],
  ['06.12.34.56.78', '<PHONE>'],
  ['tel:+33612345678', 'tel:<PHONE>'],
  ['Call 415-555-0132.', 'Call <PHONE>.'],
  ['call 415 555 0132 2 times', 'call <PHONE> 2 times'],
  ['(tel. +44 20 7946 0958)', '(tel. <PHONE>)'],
  ['+33 6 12 34 56 78', '<PHONE>'],
  ['+49-(0)89-1234567', '<PHONE>'],
  ['Tel. 089/12345678', 'Tel. <PHONE>'],
  ['+44 20 7946 0958 2 times', '<PHONE> 2 times'],
  ['phone: 0612345678, mail: a.b@c.de', 'phone: <PHONE>, mail: <EMAIL>'],
  // negatives
  ['2024-01-15', '2024-01-15'],
  ['15.01.2024', '15.01.2024'],
  ['01/15/2024', '01/15/2024'],
  ['01-02-2024-12', '01-02-2024-12'],
  ['12:34:56', '12:34:56'],
  ['1.2.3', '1.2.3'],
  ['v10.4.12', 'v10.4.12'],
  ['Order 12345678', 'Order 12345678'],
  ['4155550132', '4155550132'],
  ['1732886400', '1732886400'],
  ['550e8400-e29b-41d4-a716-446655440000', '550e8400-e29b-41d4-a716-446655440000'],
  ['12345678-1234-1234-1234-123456789012', '12345678-1234-1234-1234-123456789012'],
  ['415-555-0132-99', '415-555-0132-99'],
  ['+1 +1 +1', '+1 +1 +1'],
  ['+100', '+100'],
  ['0000012345', '0000012345'],
  ['00442079460958', '00442079460958'],
  ['(1) 234 567 890', '(1) 234 567 890'],
  ['f(415) 555-0132', 'f(415) 555-0132'],
  ['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK'],
  ['$1,234,567.89', '$1,234,567.89'],
  ['3.14159265358979', '3.14159265358979'],
  ['2024-01-15T10:30:00+01:00', '2024-01-15T10:30:00+01:00'],
  ['01 23 45 67', '01 23 45 67'],
  ['x0612345678', 'x0612345678'],
  ['+05:30', '+05:30'],
  ['ISBN 978-3-16-148410-0', 'ISBN 978-3-16-148410-0'],
  ['SSN-like 123-45-6789', 'SSN-like 123-45-6789'],
  ['x = 0.0612345678', 'x = 0.0612345678'],
  ['price 1.234.567,89 EUR', 'price 1.234.567,89 EUR'],
  ['0612/34', '0612/34'],
];

const MIXED: Case[] = [
  [
    "I'm sorry, but I can't help with that. If you need assistance, please contact anna@example.com.",
    "I'm sorry, but I can't help with that. If you need assistance, please contact <EMAIL>.",
  ],
  ['Contact anna@example.com or +44 20 7946 0958 from 10.0.0.1', 'Contact <EMAIL> or <PHONE> from <IP>'],
  ['{"user":"anna@example.com","ip":"192.168.1.20","ts":1732886400000}', '{"user":"<EMAIL>","ip":"<IP>","ts":1732886400000}'],
  ['Transfer to DE89 3704 0044 0532 0130 00 with card 4111 1111 1111 1111.', 'Transfer to <IBAN> with card <CARD>.'],
  ['+14155550132@example.com', '<EMAIL>'],
  ['0612345678@example.com', '<EMAIL>'],
  [
    'at Object.<anonymous> (/app/src/index.ts:12:34) v20.9.0 2024-01-15 id=550e8400-e29b-41d4-a716-446655440000',
    'at Object.<anonymous> (/app/src/index.ts:12:34) v20.9.0 2024-01-15 id=550e8400-e29b-41d4-a716-446655440000',
  ],
  ['', ''],
  ['no pii here at all', 'no pii here at all'],
  ['anna@example.com 4111111111111111', '<EMAIL> <CARD>'],
  ['::1 anna@example.com', '<IP> <EMAIL>'],
  ['Name: Anna\nEmail: anna@example.com\nPhone: (415) 555-0132\nIBAN: GB82 WEST 1234 5698 7654 32\n', 'Name: Anna\nEmail: <EMAIL>\nPhone: <PHONE>\nIBAN: <IBAN>\n'],
  ['«anna@example.com»', '«<EMAIL>»'],
  ['ünïcödé 192.168.0.1 ✓', 'ünïcödé <IP> ✓'],
];

const TABLE: [string, Case[]][] = [
  ['email', EMAIL],
  ['iban', IBAN],
  ['card', CARD],
  ['ip', IP],
  ['phone', PHONE],
  ['mixed', MIXED],
];

describe('redact', () => {
  it('has a table of at least 150 cases', () => {
    expect(TABLE.reduce((n, [, cases]) => n + cases.length, 0)).toBeGreaterThanOrEqual(150);
  });

  for (const [name, cases] of TABLE) {
    describe(name, () => {
      it.each(cases)('%j', (input, expected) => {
        expect(redact(input)).toBe(expected);
      });
    });
  }

  it('keeps the seed example: the refusal keeps every character but the address', () => {
    const raw = 'I cannot share personal details. Reach out to anna@example.com instead.';
    expect(redact(raw)).toBe('I cannot share personal details. Reach out to <EMAIL> instead.');
  });

  it('is idempotent', () => {
    for (const [, cases] of TABLE) {
      for (const [input] of cases) expect(redact(redact(input))).toBe(redact(input));
    }
  });
});

describe('redact on adversarial input', () => {
  const MB = 1 << 20;
  const fill = (unit: string) => unit.repeat(Math.ceil(MB / unit.length)).slice(0, MB);
  const inputs: [string, string][] = [
    ['a', fill('a')],
    ['a.', fill('a.')],
    ['aaaa@', fill('aaaa@')],
    ['digits', fill('1')],
    ['1 ', fill('1 ')],
    ['::', fill(':')],
    ['1.', fill('1.')],
    ['+1 ', fill('+1 ')],
    ['01 ', fill('01 ')],
    ['4111 ', fill('4111 ')],
    ['a@a.', fill('a@a.')],
    ['u@[IPv6:1:2:…]', fill('u@[IPv6:1:2:3:4:5:6:7:8:9:a:b:c:d:e:f:0:1:2:3:4:5:6:7:8:9:a:b:c:d:e:f] ')],
    ['u@[1.1.1.1', fill('u@[1.1.1.1')],
    ['ab12', fill('ab12')],
  ];
  // Speed is the benchmark's job (npm run bench:redact); here each input must simply come back
  // whole — a super-linear blow-up on 1 MB would run into the test timeout instead.
  it.each(inputs)('%s × 1 MB comes back with nothing lost', (_name, input) => {
    const out = redact(input);
    expect(out.length).toBeGreaterThan(0);
    expect(out.replace(/<(EMAIL|IBAN|CARD|PHONE|IP)>/g, '').length).toBeLessThanOrEqual(input.length);
    if (!/<(EMAIL|IBAN|CARD|PHONE|IP)>/.test(out)) expect(out).toBe(input);
  });
});

describe('redactText / redactMessages', () => {
  const key = /sk-[A-Za-z0-9]{8,64}/;

  it('redacts messages with the detectors and caller patterns', () => {
    const messages = [
      { role: 'system', content: 'You are helpful.' },
      { role: 'user', content: 'My key is sk-abcDEF123456 and mail anna@example.com' },
      { role: 'assistant', content: 'Call +1-415-555-0132.' },
    ];
    expect(redactMessages(messages, { extraPatterns: [key] })).toEqual([
      { role: 'system', content: 'You are helpful.' },
      { role: 'user', content: 'My key is <REDACTED> and mail <EMAIL>' },
      { role: 'assistant', content: 'Call <PHONE>.' },
    ]);
  });

  it('uses the caller placeholder for caller patterns only', () => {
    expect(redactText('token sk-abcDEF123456 ip 10.0.0.1', { extraPatterns: [key], placeholder: '[secret]' })).toBe('token [secret] ip <IP>');
  });

  it('keeps other message fields and does not mutate the input', () => {
    const messages = [{ role: 'user', content: 'anna@example.com', name: 'anna' }];
    const out = redactMessages(messages);
    expect(out).toEqual([{ role: 'user', content: '<EMAIL>', name: 'anna' }]);
    expect(messages[0].content).toBe('anna@example.com');
  });

  it('applies the five detectors when no patterns are given', () => {
    expect(redactMessages([{ role: 'user', content: 'GB82 WEST 1234 5698 7654 32' }])).toEqual([{ role: 'user', content: '<IBAN>' }]);
    expect(redactText('x 4111111111111111 y')).toBe(redact('x 4111111111111111 y'));
  });

  it('replaces the union when a caller pattern overlaps a detected span', () => {
    expect(redactText('mail anna@example.com now', { extraPatterns: [/mail anna/] })).toBe('<REDACTED> now');
    expect(redactText('id 4111111111111111', { extraPatterns: [/id 4111/] })).toBe('<REDACTED>');
  });

  it('finds every match of a non-global pattern and leaves the caller regex untouched', () => {
    const re = /secret\d/g;
    re.lastIndex = 5;
    expect(redactText('secret1 secret2 secret3', { extraPatterns: [re] })).toBe('<REDACTED> <REDACTED> <REDACTED>');
    expect(redactText('secret1 secret2', { extraPatterns: [/secret\d/] })).toBe('<REDACTED> <REDACTED>');
    expect(re.lastIndex).toBe(5);
  });

  it('survives patterns that can match the empty string', () => {
    expect(redactText('abc x def', { extraPatterns: [/x*/] })).toBe('abc <REDACTED> def');
  });

  it('is case-insensitive when the caller pattern says so', () => {
    expect(redactText('Project ZEPHYR and zephyr', { extraPatterns: [/zephyr/i], placeholder: '<CODENAME>' })).toBe('Project <CODENAME> and <CODENAME>');
  });
});
