// Context words before a number (DESIGN: "Redaction", the context rule). A bare digit group is
// ambiguous; the words written just before it decide, as the field's best recognisers do:
// "call me on 9472 7916" is a phone, "Order 9472 7916" is not, "card 3521 …" is a card.
//
// `contextBefore(text, i)` reads the words before position `i`, nearest first, and answers with the
// first deciding word:
//   - a phone word (phone, tel, mobile, call, fax, desk, office, WhatsApp … in English, German,
//     French, Spanish, Italian, Dutch, Polish, Portuguese and Swedish) → PHONE;
//   - a card word (card, cc, credit card, Visa, Karte, carte, tarjeta …) → CARD;
//   - a negative word (order, invoice, ref, tracking, ticket, account, ISBN, version …) → NEGATIVE.
// Small words are stepped over ("call me on", "Tel. Nr."), so are up to two capitalised words (a
// name: "call Anna on", "llame a José Emilio al"); "number" / "Nummer" / "numéro" are weak: they let a word further back decide
// ("Order number 12345678" is an order, "phone number" a phone), and with an owner before them
// they are a phone word ("my number is 9472 7916", "mon numéro est le"; "the number is 1234567",
// a model's answer, stays). Any other word, a digit, a blank line or the window's edge ends the
// search. German-style compounds ending in "nummer"/"number" are decided by their first part
// ("Telefonnummer" phone, "Bestellnummer" negative, "Kartennummer" card).
//
// Bounded: at most CONTEXT_CHARS characters before `i` are read (plus one, to see whether the
// farthest word is cut), and at most MAX_WORDS words; each word is sliced once.

export const CTX_PHONE = 1;
export const CTX_CARD = 2;
export const CTX_NEGATIVE = 4;
/** "number", "Nummer", "numéro" …: decides nothing itself, a phone word if nothing further back does */
const CTX_WEAK = 8;
/** a small word ("me", "on", "is", "au") to step over */
const CTX_SKIP = 16;
/** "my", "mon", "mein" …: stepped over, and makes a weak word before it a phone word */
const CTX_OWNER = 32;

/** How far back the words are read, in characters. */
export const CONTEXT_CHARS = 48;
/** Characters read before a number at most: the window and one more to see a cut word. */
export const CONTEXT_REACH = CONTEXT_CHARS + 1;
const MAX_WORDS = 6;
const MAX_WORD = 24;

const PHONE_WORDS = `
  phone phones phoned telephone tel tele ph mob mobile mobiles cell cellphone cellular fax desk office
  call calling ring ringing rang dial dialled dialed text texting sms whatsapp viber contact
  hotline helpline landline voicemail answering reach reachable switchboard tlf tfn
  telephonic telefonico telefonica telefónico telefónica telefonicamente
  telefon telefonisch handy mobil mobiltelefon festnetz telefax anruf anrufen rufen ruft
  zurückrufen durchwahl zentrale büro erreichbar erreichen kontakt
  téléphone telephone tél portable fixe appeler appelez appelle appel rappeler rappelez joindre
  joignable contacter standard bureau répond répondent
  teléfono telefono tfno móvil movil celular fijo llamar llamarme llamarnos llámame llamame llame
  llamen llama
  llamada contacto contactar oficina contestan contesta responden
  cellulare fisso chiamare chiamarmi chiamami chiamate chiama chiamata recapito contatto contattare ufficio
  risponde rispondono
  telefoon mobiel mobiele gsm vast vaste bellen bel belt gebeld appen kantoor bereikbaar
  telefonu telefonem komórka komórki komórkowy stacjonarny faks zadzwonić zadzwoń dzwonić
  dzwonić kontaktowy biuro odbiera
  telefone telemóvel telemovel fixo ligar ligue liga ligação ligacao contato atende
  växel ringa ringer kontor svarar
`;

const CARD_WORDS = `
  card cards cc creditcard debitcard visa mastercard amex maestro discover jcb unionpay diners pan
  karte kreditkarte debitkarte ec-karte girocard
  carte cb bancaire
  tarjeta
  carta
  kaart creditcard pinpas
  karta kartę karty karcie
  cartão cartao
  kort kortet kreditkort kreditkortet betalkort
`;

// "credit"/"debit"/"kredyt" alone are card words too: "credit 4111 …" — a card more often than not.
const CARD_ADJECTIVES = 'credit debit crédito credito crédit kredytowa kredytowej';

const NEGATIVE_WORDS = `
  order orders invoice inv ref reference tracking track shipment parcel package ticket case receipt
  transaction txn booking reservation confirmation account acct customer sku serial isbn issn ean
  upc po batch lot version build release patent policy claim contract member membership voucher
  coupon iban bic swift routing vat tax id uuid sha hash commit pr issue
  bestellung bestellnr rechnung rechnungsnr auftrag sendung paket lieferung vorgang kundennr kunde
  referenz fall artikel vertrag konto buchung versicherung police steuer ust
  commande facture référence réf suivi colis dossier client contrat compte réservation
  pedido factura referencia seguimiento envío envio paquete cliente contrato cuenta reserva
  expediente transacción
  ordine fattura riferimento rif spedizione pacco pratica contratto conto prenotazione
  bestelling factuur referentie zending pakket klant rekening boeking
  zamówienie zamówienia faktura faktury przesyłki przesyłka paczka zgłoszenie klienta umowy rachunek
  fatura referência rastreio rastreamento encomenda protocolo
  referens spårning försändelse kund ärende bokning
`;

const WEAK_WORDS = 'number nummer numéro numero número numer numerem numeru nummeret';

// Whose number: "my number is …", "mon numéro", "pod numerem" (Polish "at the number").
const OWNER_WORDS = `
  my your his her our their mein meine meiner unsere unser ihre unter mon ma mes notre nos votre
  mi mis nuestro su tu mio mia nostro tuo mijn onze ons uw jouw mój moja nasz pod meu minha nosso
  seu mitt min vårt ditt
`;

const SKIP_WORDS = `
  is are was be me us at on to the a an or and via new please pls also
  ist lautet mich mir uns an die der den bitte oder und auf per neue neuen sie
  est au à le la les l m nous de du des svp ou et par sur nouveau nouvelle en
  es al el los nos del por favor o y nuevo
  è e il lo mi ci di per allo nuovo
  op naar het mij of nieuwe u
  na mnie do lub i przez jest to
  é no o para em ou pelo pela da do
  är på till mig oss eller och nya nytt
  nr no num nro núm n
`;

// Compounds: "Telefonnummer", "Bestellnummer", "Kartennummer", "trackingnumber" …
const NUMBER_SUFFIXES = ['nummer', 'number', 'numer', 'nr'];
const PHONE_STEMS = 'telefon telefoon tel handy mobil mobiel fax ruf kontakt contact festnetz durchwahl phone cell sms whatsapp notruf';
const CARD_STEMS = 'karten kreditkarten kaart kort kreditkort card creditcard debitcard';
const NEGATIVE_STEMS = `
  bestell order rechnungs rechnung kunden auftrags sendungs tracking referenz vorgangs ticket artikel
  konto invoice factuur bestel klant klanten referentie zending faktura zamówienia referens
  spårnings kund fall case serien serial steuer versicherungs mitglieds member account policy
  police vertrags buchungs transaktions paket lieferschein
`;

const WORDS = new Map<string, number>();
const STEMS = new Map<string, number>();
const add = (map: Map<string, number>, list: string, flag: number) => {
  for (const w of list.split(/\s+/)) if (w) map.set(w, (map.get(w) ?? 0) | flag);
};
// Later lists win only where a word has no flag yet: a negative word is never also a phone word.
add(WORDS, NEGATIVE_WORDS, CTX_NEGATIVE);
for (const [list, flag] of [
  [PHONE_WORDS, CTX_PHONE],
  [CARD_WORDS, CTX_CARD],
  [CARD_ADJECTIVES, CTX_CARD],
  [WEAK_WORDS, CTX_WEAK],
  [OWNER_WORDS, CTX_OWNER],
  [SKIP_WORDS, CTX_SKIP],
] as const) {
  for (const w of list.split(/\s+/)) if (w && !WORDS.has(w)) WORDS.set(w, flag);
}
add(STEMS, PHONE_STEMS, CTX_PHONE);
add(STEMS, CARD_STEMS, CTX_CARD);
add(STEMS, NEGATIVE_STEMS, CTX_NEGATIVE);

function isDigitCode(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** How far back the start of a run of digit groups is looked for (a 22-digit tracking number). */
export const MAX_RUN_BACK = 32;

/**
 * Start of the run of digit groups (joined by single spaces, dashes or dots) that the digit at `i`
 * is in, looking back at most MAX_RUN_BACK characters: for a number found at "0202" in
 * "tracking 9400 1112 0202 …", the words that count are those before "9400".
 */
export function numberRunStart(text: string, i: number): number {
  const lo = i - MAX_RUN_BACK;
  let s = i;
  for (;;) {
    const sep = text.charCodeAt(s - 1);
    if (s - 2 < lo || (sep !== 32 && sep !== 45 && sep !== 46) || !isDigitCode(text.charCodeAt(s - 2))) return s;
    s -= 2;
    while (s - 1 >= lo && isDigitCode(text.charCodeAt(s - 1))) s--;
  }
}

/** A letter of a word: ASCII, or Latin-1 / Latin Extended-A and -B (é, ü, ł, ż, å …). */
function isLetter(c: number): boolean {
  const l = c | 32;
  if (l >= 97 && l <= 122) return true;
  return c >= 0xc0 && c <= 0x24f && c !== 0xd7 && c !== 0xf7;
}

const isUpper = (c: number) => (c >= 65 && c <= 90) || (c >= 0xc0 && c <= 0xde && c !== 0xd7);

function classify(word: string): number {
  const flag = WORDS.get(word);
  if (flag !== undefined) return flag;
  if (word.length > 4) {
    for (const suffix of NUMBER_SUFFIXES) {
      if (word.length > suffix.length + 1 && word.endsWith(suffix)) {
        let stem = word.slice(0, -suffix.length);
        let s = STEMS.get(stem);
        if (s === undefined && stem.endsWith('s')) s = STEMS.get((stem = stem.slice(0, -1)));
        if (s !== undefined) return s;
      }
    }
  }
  return 0;
}

/**
 * What the words before `i` say about the number starting there: CTX_PHONE, CTX_CARD,
 * CTX_NEGATIVE, or 0 (nothing). Reads at most CONTEXT_REACH characters before `i`.
 */
export function contextBefore(text: string, i: number): number {
  const lo = i - CONTEXT_CHARS > 0 ? i - CONTEXT_CHARS : 0;
  let p = i - 1;
  let words = 0;
  let weak = false;
  let names = 0;
  while (words < MAX_WORDS) {
    // the gap before the next word back: punctuation and blanks, no digit, at most one line break
    let newlines = 0;
    while (p >= lo && !isLetter(text.charCodeAt(p))) {
      const c = text.charCodeAt(p);
      if (isDigitCode(c)) return 0;
      if (c === 10 && ++newlines > 1) return 0;
      p--;
    }
    if (p < lo) break;
    const end = p + 1;
    while (p >= lo && end - p <= MAX_WORD && isLetter(text.charCodeAt(p))) p--;
    // a word cut by the window (or longer than any word listed), or glued to a digit, decides nothing
    if (end - p > MAX_WORD || (p < lo && lo > 0 && isLetter(text.charCodeAt(p))) || isDigitCode(text.charCodeAt(p))) break;
    const first = p + 1;
    const flag = classify(text.slice(first, end).toLowerCase());
    words++;
    if (flag & CTX_NEGATIVE) return CTX_NEGATIVE;
    if (flag & (CTX_PHONE | CTX_CARD)) return flag & (CTX_PHONE | CTX_CARD);
    if (flag & CTX_WEAK) weak = true;
    else if (flag & CTX_OWNER) {
      if (weak) return CTX_PHONE;
    } else if (flag & CTX_SKIP) continue;
    else if (names < 2 && isUpper(text.charCodeAt(first)))
      names++; // "call Anna on", "José Emilio"
    else break;
  }
  return 0;
}
