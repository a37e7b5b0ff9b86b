// Payment-card networks by issuer identification number (IIN) prefix and card length (DESIGN:
// "Redaction"). The table follows the IIN ranges of the Wikipedia "Payment card number" table,
// inactive networks included (their cards are still printed on statements), plus JCB's 15-digit
// 1800/2131 numbers. A number is a card by issuer when a network with its prefix uses its length.
//
// Lookup is one array read on the first four digits; the few networks with a longer prefix
// (676770, 6054740–6054744 …) are checked only under their four-digit prefix.

/** [first prefix, last prefix (same number of digits), lengths]. */
type Range = readonly [from: number, to: number, lengths: readonly number[]];

const L12_19 = [12, 13, 14, 15, 16, 17, 18, 19];
const L14_19 = [14, 15, 16, 17, 18, 19];
const L16_19 = [16, 17, 18, 19];
const L16_18_19 = [16, 18, 19];

const RANGES: readonly Range[] = [
  [1, 1, [15]], // UATP
  [1800, 1800, [15]], // JCB (15-digit)
  [2131, 2131, [15]], // JCB (15-digit)
  [1946, 1946, L16_18_19], // GPN
  [2014, 2014, [15]], // Diners Club enRoute
  [2149, 2149, [15]], // Diners Club enRoute
  [2200, 2204, L16_19], // Mir
  [2205, 2205, [16]], // BORICA
  [2221, 2720, [16]], // Mastercard
  [31, 31, [19]], // China T-Union
  [300, 305, L14_19], // Diners Club International / Carte Blanche
  [3095, 3095, L14_19], // Diners Club International
  [34, 34, [15]], // American Express
  [36, 36, L14_19], // Diners Club International
  [37, 37, [15]], // American Express
  [38, 39, L14_19], // Diners Club International (3841 Hipercard)
  [353, 353, [16]], // RuPay
  [356, 356, [16]], // RuPay
  [357111, 357111, [16]], // LankaPay
  [3528, 3589, L16_19], // JCB
  [4, 4, [13, 16, 19]], // Visa (Electron, Dankort 4571, Elo 4xxx: 16)
  [50, 50, L16_18_19], // GPN
  [5018, 5018, L12_19], // Maestro
  [5019, 5019, [16]], // Dankort
  [5020, 5020, L12_19], // Maestro
  [5038, 5038, L12_19], // Maestro
  [504175, 504175, [16]], // Elo
  [506099, 506198, L16_18_19], // Verve
  [506699, 506778, [16]], // Elo
  [507803, 507819, [16]], // Meeza
  [507865, 507964, L16_18_19], // Verve
  [508, 508, [16]], // RuPay
  [509, 509, [16]], // Elo
  [51, 55, [16]], // Mastercard (Diners Club US & Canada 54–55)
  [56, 56, L16_18_19], // GPN
  [560221, 560225, [16]], // Bankcard
  [5610, 5610, [16]], // Bankcard
  [5614, 5614, [16]], // Uzcard
  [564182, 564182, L16_18_19], // Switch
  [58, 58, L16_18_19], // GPN
  [5893, 5893, L12_19], // Maestro
  [60, 60, [16]], // RuPay
  [60, 63, L16_18_19], // GPN
  [60400100, 60420099, L16_19], // UkrCard
  [6054740, 6054744, [16]], // NPS Pridnestrovie
  [6011, 6011, L16_19], // Discover
  [62, 62, L16_19], // UnionPay
  [622126, 622925, L16_19], // Discover (UnionPay co-branded)
  [6304, 6304, L12_19], // Maestro, Laser
  [633110, 633110, L16_18_19], // Switch
  [6333, 6333, L16_18_19], // Switch
  [6334, 6334, L16_18_19], // Solo
  [636, 636, L16_19], // InterPayment (Elo 636297, 636368)
  [637, 639, [16]], // InstaPayment
  [644, 649, L16_19], // Discover
  [65, 65, L16_19], // Discover, RuPay, Troy
  [650002, 650027, L16_18_19], // Verve
  [6706, 6706, L16_19], // Laser
  [6709, 6709, L16_19], // Laser
  [6759, 6759, L12_19], // Maestro (UK), Switch
  [6761, 6763, L12_19], // Maestro
  [676770, 676770, L12_19], // Maestro UK
  [676774, 676774, L12_19], // Maestro UK
  [6767, 6767, L16_18_19], // Solo
  [6771, 6771, L16_19], // Laser
  [81, 82, [16]], // RuPay
  [8600, 8600, [16]], // Uzcard
  [88, 88, L16_18_19], // GPN
  [9704, 9704, [16, 19]], // Napas
  [9792, 9792, [16]], // Troy
  [9860, 9860, [16]], // Humo
];

const digitCount = (n: number) => String(n).length;
const maskOf = (lengths: readonly number[]) => lengths.reduce((m, len) => m | (1 << len), 0);

/** Lengths (bit `len` set) used by every network whose prefix is decided by four digits. */
const BY_FOUR = new Int32Array(10_000);
/** Networks with a longer prefix, by the four-digit prefix they start with. */
const LONGER = new Map<number, Range[]>();

for (const range of RANGES) {
  const [from, to, lengths] = range;
  const k = digitCount(from);
  const mask = maskOf(lengths);
  if (k <= 4) {
    const scale = 10 ** (4 - k);
    for (let p = from * scale; p < (to + 1) * scale; p++) BY_FOUR[p] |= mask;
  } else {
    const scale = 10 ** (k - 4);
    for (let p = Math.floor(from / scale); p <= Math.floor(to / scale); p++) {
      const list = LONGER.get(p) ?? [];
      list.push(range);
      LONGER.set(p, list);
    }
  }
}

/** The number formed by the first `k` digits of `d`. */
function prefix(d: ArrayLike<number>, k: number): number {
  let v = 0;
  for (let i = 0; i < k; i++) v = v * 10 + d[i];
  return v;
}

/** Could some network's card start with these four digits? (`d` holds digit values 0–9.) */
export function mayBeIssued(d: ArrayLike<number>): boolean {
  const p4 = prefix(d, 4);
  return BY_FOUR[p4] !== 0 || LONGER.has(p4);
}

/** Does a network with this prefix issue cards of `len` digits? */
export function issuerFits(d: ArrayLike<number>, len: number): boolean {
  const p4 = prefix(d, 4);
  if (BY_FOUR[p4] & (1 << len)) return true;
  const longer = LONGER.get(p4);
  if (!longer) return false;
  for (const [from, to, lengths] of longer) {
    const k = digitCount(from);
    if (len < k) continue;
    const p = prefix(d, k);
    if (p >= from && p <= to && lengths.includes(len)) return true;
  }
  return false;
}
