// A labelled PII corpus for the redactor (DESIGN: "Redaction"): customer-support-like
// messages in 13 locales (9 languages) embedding @faker-js/faker's emails, IBANs, card numbers of
// several issuers, phone numbers in every style faker has for the locale, IPv4/IPv6 addresses, and
// hand-picked negatives (dates, times, versions, amounts, UUIDs, ISBNs, coordinates, order, invoice,
// ticket and tracking numbers). Every message knows the spans it holds, so recall and precision are
// computed per kind by span (bench/corpus/score.ts).
//
// Deterministic: faker 10.6.0 (pinned exactly in package.json) seeded with CORPUS_SEED + the
// locale's index. Nothing is written to the repository: the bench builds the corpus in memory
// (about 0.5 MB, well under a second). To look at it:
//   npx tsx bench/corpus/generate-pii-corpus.ts [count] [seed] > /tmp/pii-corpus.jsonl
//
// Two choices that decide what the numbers mean:
// - Phones: about one template in five has no phone word before the number (a signature line, a
//   name with the number in parentheses, "Still …"); the rest use the words people write
//   ("call me on", "Mobile:", "my number is", "Tel.") in the message's language. Faker's numbers are
//   taken as they come, including its odd ones (Italian "+70 …", Swedish six-digit "556368").
// - Cards: real networks (faker's Visa, Mastercard, Discover, Amex, Diners, JCB plus, built here,
//   JCB 15-digit 1800/2131, 12-digit Maestro, Mir, UnionPay, RuPay, Troy, UATP, Elo, Verve, Humo,
//   Napas …) appear anywhere; numbers outside every real IIN, as other generators and regional
//   schemes write them (a "35…" JCB-like outside 3528–3589, a "0604…" Maestro), appear only
//   after a card word, which is the only thing that makes them cards.
import { type Faker, fakerDE, fakerDE_CH, fakerEN_AU, fakerEN_GB, fakerEN_IN, fakerEN_US, fakerES, fakerFR, fakerIT, fakerNL, fakerPL, fakerPT_BR, fakerSV } from '@faker-js/faker';
import type { PiiKind } from '../../lib/redact/span';

export const CORPUS_SEED = 20_251_129;
export const CORPUS_MESSAGES = 4000;

export type NegativeClass = 'date' | 'time' | 'version' | 'amount' | 'uuid' | 'isbn' | 'coordinates' | 'order' | 'invoice' | 'tracking' | 'timestamp' | 'count';

export interface LabelledSpan<K extends string> {
  start: number;
  end: number;
  kind: K;
}

export interface LabelledMessage {
  locale: string;
  text: string;
  /** the PII the message holds */
  spans: LabelledSpan<PiiKind>[];
  /** look-alikes that must stay untouched */
  negatives: LabelledSpan<NegativeClass>[];
}

type Lang = 'en' | 'de' | 'fr' | 'es' | 'it' | 'nl' | 'pl' | 'pt' | 'sv';

interface Locale {
  name: string;
  faker: Faker;
  lang: Lang;
  /** IBAN country of the locale */
  country: string;
}

export const LOCALES: readonly Locale[] = [
  { name: 'en_US', faker: fakerEN_US, lang: 'en', country: 'GB' },
  { name: 'en_GB', faker: fakerEN_GB, lang: 'en', country: 'GB' },
  { name: 'en_AU', faker: fakerEN_AU, lang: 'en', country: 'GB' },
  { name: 'en_IN', faker: fakerEN_IN, lang: 'en', country: 'GB' },
  { name: 'de', faker: fakerDE, lang: 'de', country: 'DE' },
  { name: 'de_CH', faker: fakerDE_CH, lang: 'de', country: 'CH' },
  { name: 'fr', faker: fakerFR, lang: 'fr', country: 'FR' },
  { name: 'es', faker: fakerES, lang: 'es', country: 'ES' },
  { name: 'it', faker: fakerIT, lang: 'it', country: 'IT' },
  { name: 'nl', faker: fakerNL, lang: 'nl', country: 'NL' },
  { name: 'pl', faker: fakerPL, lang: 'pl', country: 'PL' },
  { name: 'pt_BR', faker: fakerPT_BR, lang: 'pt', country: 'PT' },
  { name: 'sv', faker: fakerSV, lang: 'sv', country: 'SE' },
];

// ---------------------------------------------------------------------------------------------
// Templates. A slot is {name}; PII slots: phone, card (a real network), cardAny (also a number
// outside every IIN: only after a card word), email, iban, ip. Negative slots: date, time,
// version, amount, uuid, isbn, coords, order, invoice, tracking, ts. {who} is a first name.

interface Templates {
  /** a phone word stands close before {phone} */
  phone: string[];
  /** no phone word: the number's format is all there is */
  phoneBare: string[];
  /** a card word stands before {cardAny} */
  card: string[];
  /** no card word: only a real network's number */
  cardBare: string[];
  email: string[];
  iban: string[];
  ip: string[];
  negative: string[];
}

const TEMPLATES: Record<Lang, Templates> = {
  en: {
    phone: [
      'Can someone call me on {phone}? I have some questions about opening an account.',
      "They're not answering at {phone}, is the office closed today?",
      'My number is {phone}, please ring after 5pm.',
      'Phone:\n{phone}',
      'Mobile: {phone}',
      'Tel. {phone} (ask for {who})',
      'You can text me at {phone} or WhatsApp {phone}.',
      'Call {who} on {phone} if the courier is late.',
      'Contact number: {phone}',
      'Please update my phone number to {phone}.',
      'Office: {phone}, desk {phone}',
      'Fax: {phone}',
    ],
    phoneBare: ['Best regards,\n{who}\n{phone}', '{who} ({phone}) asked for a refund on {date}.', 'Still {phone}, nothing changed since {date}.'],
    card: [
      'My card {cardAny} was charged twice on {date}.',
      'Credit card: {cardAny}',
      'cc {cardAny} exp 09/27',
      'Please refund to the credit card {cardAny}, not the bank account.',
      'The card number is {cardAny} and the amount was {amount}.',
    ],
    cardBare: ['I paid {amount} with {card} yesterday.', 'Payment with {card} failed at {time}.'],
    email: ['Send the receipt to {email}, thanks!', 'Email: {email}'],
    iban: ['Please transfer the refund to {iban}.', 'IBAN: {iban} (account holder {who})'],
    ip: ['Login from {ip} at {time} was not me.', 'The webhook comes from {ip}.'],
    negative: [
      'Order {order} shipped on {date} at {time}; tracking number {tracking}.',
      'Invoice {invoice} over {amount} is due on {date}.',
      'App version {version}, build {ts}, request id {uuid}.',
      'The book (ISBN {isbn}) was delivered to {coords}.',
      'Ticket {order} reopened at {time} on {date}.',
    ],
  },
  de: {
    phone: [
      'Kann mich jemand unter {phone} zurückrufen? Ich habe Fragen zu meinem Konto.',
      'Unter {phone} geht niemand ran, ist das Büro heute geschlossen?',
      'Meine Nummer ist {phone}, bitte nach 17 Uhr anrufen.',
      'Telefon:\n{phone}',
      'Handy: {phone}',
      'Tel. {phone} (bitte nach {who} fragen)',
      'Sie erreichen mich mobil unter {phone}.',
      'Rufen Sie {who} unter {phone} an, falls der Kurier zu spät kommt.',
      'Telefonnummer: {phone}',
      'Bitte ändern Sie meine Handynummer auf {phone}.',
      'Festnetz {phone}, Fax {phone}',
    ],
    phoneBare: ['Mit freundlichen Grüßen\n{who}\n{phone}', '{who} ({phone}) möchte eine Erstattung vom {date}.'],
    card: [
      'Meine Karte {cardAny} wurde am {date} doppelt belastet.',
      'Kreditkarte: {cardAny}',
      'Bitte auf die Kreditkarte {cardAny} zurückbuchen.',
      'Kartennummer {cardAny}, Betrag {amount}.',
    ],
    cardBare: ['Ich habe {amount} mit {card} bezahlt.', 'Zahlung mit {card} um {time} fehlgeschlagen.'],
    email: ['Bitte die Quittung an {email} schicken.', 'E-Mail: {email}'],
    iban: ['Bitte überweisen Sie die Erstattung auf {iban}.', 'IBAN: {iban} (Kontoinhaber {who})'],
    ip: ['Die Anmeldung von {ip} um {time} war nicht ich.', 'Der Webhook kommt von {ip}.'],
    negative: [
      'Bestellung {order} wurde am {date} um {time} versandt, Sendungsnummer {tracking}.',
      'Rechnung {invoice} über {amount} ist am {date} fällig.',
      'App-Version {version}, Build {ts}, Anfrage {uuid}.',
      'Das Buch (ISBN {isbn}) wurde nach {coords} geliefert.',
      'Bestellnummer {order} vom {date}.',
    ],
  },
  fr: {
    phone: [
      "Quelqu'un peut-il m'appeler au {phone} ? J'ai des questions sur mon compte.",
      'Personne ne répond au {phone}, le bureau est-il fermé ?',
      'Mon numéro est le {phone}, merci de rappeler après 17h.',
      'Téléphone :\n{phone}',
      'Portable : {phone}',
      'Tél. {phone} (demander {who})',
      'Vous pouvez me joindre au {phone}.',
      'Appelez {who} au {phone} si le livreur est en retard.',
      'Numéro de téléphone : {phone}',
      'Fixe {phone}, fax {phone}',
    ],
    phoneBare: ['Cordialement,\n{who}\n{phone}', '{who} ({phone}) demande un remboursement du {date}.'],
    card: [
      'Ma carte {cardAny} a été débitée deux fois le {date}.',
      'Carte bancaire : {cardAny}',
      'Merci de rembourser sur la carte de crédit {cardAny}.',
      'Numéro de carte {cardAny}, montant {amount}.',
    ],
    cardBare: ["J'ai payé {amount} avec la {card} hier.", 'Le paiement avec {card} a échoué à {time}.'],
    email: ['Envoyez le reçu à {email}, merci.', 'Courriel : {email}'],
    iban: ['Merci de virer le remboursement sur {iban}.', 'IBAN : {iban} (titulaire {who})'],
    ip: ["La connexion depuis {ip} à {time} n'était pas moi.", 'Le webhook vient de {ip}.'],
    negative: [
      'La commande {order} est partie le {date} à {time}, numéro de suivi {tracking}.',
      'La facture {invoice} de {amount} est due le {date}.',
      "Version de l'app {version}, build {ts}, requête {uuid}.",
      'Le livre (ISBN {isbn}) a été livré à {coords}.',
      'Commande n° {order} du {date}.',
    ],
  },
  es: {
    phone: [
      '¿Alguien puede llamarme al {phone}? Tengo preguntas sobre mi cuenta.',
      'No contestan en el {phone}, ¿está cerrada la oficina?',
      'Mi número es {phone}, por favor llamen después de las 17h.',
      'Teléfono:\n{phone}',
      'Móvil: {phone}',
      'Tel. {phone} (preguntar por {who})',
      'Pueden escribirme por WhatsApp al {phone}.',
      'Llame a {who} al {phone} si el repartidor se retrasa.',
      'Número de contacto: {phone}',
      'Fijo {phone}, fax {phone}',
    ],
    phoneBare: ['Saludos,\n{who}\n{phone}', '{who} ({phone}) pide un reembolso del {date}.'],
    card: [
      'Mi tarjeta {cardAny} fue cargada dos veces el {date}.',
      'Tarjeta de crédito: {cardAny}',
      'Por favor reembolsen a la tarjeta {cardAny}.',
      'Número de tarjeta {cardAny}, importe {amount}.',
    ],
    cardBare: ['Pagué {amount} con la {card} ayer.', 'El pago con {card} falló a las {time}.'],
    email: ['Envíen el recibo a {email}, gracias.', 'Correo: {email}'],
    iban: ['Transfieran el reembolso a {iban}.', 'IBAN: {iban} (titular {who})'],
    ip: ['El acceso desde {ip} a las {time} no fui yo.', 'El webhook viene de {ip}.'],
    negative: [
      'El pedido {order} salió el {date} a las {time}, número de seguimiento {tracking}.',
      'La factura {invoice} de {amount} vence el {date}.',
      'Versión de la app {version}, build {ts}, solicitud {uuid}.',
      'El libro (ISBN {isbn}) se entregó en {coords}.',
      'Pedido n.º {order} del {date}.',
    ],
  },
  it: {
    phone: [
      'Qualcuno può chiamarmi al {phone}? Ho domande sul mio conto.',
      "Al {phone} non risponde nessuno, l'ufficio è chiuso?",
      'Il mio numero è {phone}, chiamate dopo le 17.',
      'Telefono:\n{phone}',
      'Cellulare: {phone}',
      'Tel. {phone} (chiedere di {who})',
      'Potete scrivermi su WhatsApp al {phone}.',
      'Chiamate {who} al {phone} se il corriere è in ritardo.',
      'Recapito telefonico: {phone}',
      'Fisso {phone}, fax {phone}',
    ],
    phoneBare: ['Cordiali saluti,\n{who}\n{phone}', '{who} ({phone}) chiede un rimborso del {date}.'],
    card: [
      'La mia carta {cardAny} è stata addebitata due volte il {date}.',
      'Carta di credito: {cardAny}',
      'Rimborsate sulla carta {cardAny}, per favore.',
      'Numero carta {cardAny}, importo {amount}.',
    ],
    cardBare: ['Ho pagato {amount} con la {card} ieri.', 'Il pagamento con {card} è fallito alle {time}.'],
    email: ['Mandate la ricevuta a {email}, grazie.', 'Email: {email}'],
    iban: ['Accreditate il rimborso su {iban}.', 'IBAN: {iban} (intestatario {who})'],
    ip: ["L'accesso da {ip} alle {time} non ero io.", 'Il webhook arriva da {ip}.'],
    negative: [
      "L'ordine {order} è partito il {date} alle {time}, numero di tracking {tracking}.",
      'La fattura {invoice} di {amount} scade il {date}.',
      "Versione dell'app {version}, build {ts}, richiesta {uuid}.",
      'Il libro (ISBN {isbn}) è stato consegnato a {coords}.',
      'Ordine n. {order} del {date}.',
    ],
  },
  nl: {
    phone: [
      'Kan iemand mij bellen op {phone}? Ik heb vragen over mijn rekening.',
      'Op {phone} neemt niemand op, is het kantoor dicht?',
      'Mijn nummer is {phone}, graag na 17 uur bellen.',
      'Telefoon:\n{phone}',
      'Mobiel: {phone}',
      'Tel. {phone} (vraag naar {who})',
      'U kunt mij appen via WhatsApp op {phone}.',
      'Bel {who} op {phone} als de koerier te laat is.',
      'Telefoonnummer: {phone}',
      'Vast {phone}, fax {phone}',
    ],
    phoneBare: ['Met vriendelijke groet,\n{who}\n{phone}', '{who} ({phone}) vraagt een terugbetaling van {date}.'],
    card: [
      'Mijn kaart {cardAny} is op {date} twee keer belast.',
      'Creditcard: {cardAny}',
      'Graag terugstorten op de creditcard {cardAny}.',
      'Kaartnummer {cardAny}, bedrag {amount}.',
    ],
    cardBare: ['Ik heb {amount} betaald met {card}.', 'Betaling met {card} mislukt om {time}.'],
    email: ['Stuur de bon naar {email}, bedankt.', 'E-mail: {email}'],
    iban: ['Stort de terugbetaling op {iban}.', 'IBAN: {iban} (rekeninghouder {who})'],
    ip: ['De login vanaf {ip} om {time} was ik niet.', 'De webhook komt van {ip}.'],
    negative: [
      'Bestelling {order} is op {date} om {time} verzonden, trackingnummer {tracking}.',
      'Factuur {invoice} van {amount} vervalt op {date}.',
      'App-versie {version}, build {ts}, verzoek {uuid}.',
      'Het boek (ISBN {isbn}) is bezorgd op {coords}.',
      'Bestelnummer {order} van {date}.',
    ],
  },
  pl: {
    phone: [
      'Czy ktoś może do mnie zadzwonić pod {phone}? Mam pytania o konto.',
      'Pod numerem {phone} nikt nie odbiera, czy biuro jest zamknięte?',
      'Mój numer to {phone}, proszę dzwonić po 17.',
      'Telefon:\n{phone}',
      'Komórka: {phone}',
      'Tel. {phone} (proszę pytać o {who})',
      'Można pisać na WhatsApp: {phone}.',
      'Proszę zadzwonić do {who} pod {phone}, jeśli kurier się spóźni.',
      'Numer kontaktowy: {phone}',
      'Stacjonarny {phone}, faks {phone}',
    ],
    phoneBare: ['Pozdrawiam,\n{who}\n{phone}', '{who} ({phone}) prosi o zwrot z {date}.'],
    card: ['Moja karta {cardAny} została obciążona dwa razy {date}.', 'Karta kredytowa: {cardAny}', 'Proszę o zwrot na kartę {cardAny}.', 'Numer karty {cardAny}, kwota {amount}.'],
    cardBare: ['Zapłaciłem {amount} przez {card} wczoraj.', 'Płatność {card} nie powiodła się o {time}.'],
    email: ['Proszę wysłać paragon na {email}.', 'E-mail: {email}'],
    iban: ['Proszę przelać zwrot na {iban}.', 'IBAN: {iban} (właściciel {who})'],
    ip: ['Logowanie z {ip} o {time} to nie ja.', 'Webhook przychodzi z {ip}.'],
    negative: [
      'Zamówienie {order} wysłano {date} o {time}, numer przesyłki {tracking}.',
      'Faktura {invoice} na {amount} jest płatna {date}.',
      'Wersja aplikacji {version}, build {ts}, żądanie {uuid}.',
      'Książka (ISBN {isbn}) dostarczona do {coords}.',
      'Zamówienie nr {order} z {date}.',
    ],
  },
  pt: {
    phone: [
      'Alguém pode me ligar no {phone}? Tenho dúvidas sobre minha conta.',
      'Ninguém atende no {phone}, o escritório está fechado?',
      'Meu número é {phone}, liguem depois das 17h.',
      'Telefone:\n{phone}',
      'Celular: {phone}',
      'Tel. {phone} (falar com {who})',
      'Podem me chamar no WhatsApp {phone}.',
      'Ligue para {who} no {phone} se o entregador atrasar.',
      'Telefone para contato: {phone}',
      'Fixo {phone}, fax {phone}',
    ],
    phoneBare: ['Atenciosamente,\n{who}\n{phone}', '{who} ({phone}) pede reembolso de {date}.'],
    card: [
      'Meu cartão {cardAny} foi cobrado duas vezes em {date}.',
      'Cartão de crédito: {cardAny}',
      'Por favor estornem no cartão {cardAny}.',
      'Número do cartão {cardAny}, valor {amount}.',
    ],
    cardBare: ['Paguei {amount} com o {card} ontem.', 'O pagamento com {card} falhou às {time}.'],
    email: ['Enviem o recibo para {email}, obrigado.', 'E-mail: {email}'],
    iban: ['Transfiram o reembolso para {iban}.', 'IBAN: {iban} (titular {who})'],
    ip: ['O acesso de {ip} às {time} não fui eu.', 'O webhook vem de {ip}.'],
    negative: [
      'O pedido {order} saiu em {date} às {time}, código de rastreio {tracking}.',
      'A fatura {invoice} de {amount} vence em {date}.',
      'Versão do app {version}, build {ts}, requisição {uuid}.',
      'O livro (ISBN {isbn}) foi entregue em {coords}.',
      'Pedido nº {order} de {date}.',
    ],
  },
  sv: {
    phone: [
      'Kan någon ringa mig på {phone}? Jag har frågor om mitt konto.',
      'Ingen svarar på {phone}, är kontoret stängt?',
      'Mitt nummer är {phone}, ring efter 17.',
      'Telefon:\n{phone}',
      'Mobil: {phone}',
      'Tel. {phone} (fråga efter {who})',
      'Ni kan skicka sms till {phone}.',
      'Ring {who} på {phone} om budet är sent.',
      'Telefonnummer: {phone}',
      'Växel {phone}, fax {phone}',
    ],
    phoneBare: ['Med vänliga hälsningar\n{who}\n{phone}', '{who} ({phone}) vill ha återbetalning från {date}.'],
    card: ['Mitt kort {cardAny} debiterades två gånger {date}.', 'Kreditkort: {cardAny}', 'Återbetala till kortet {cardAny}, tack.', 'Kortnummer {cardAny}, belopp {amount}.'],
    cardBare: ['Jag betalade {amount} med {card} igår.', 'Betalningen med {card} misslyckades {time}.'],
    email: ['Skicka kvittot till {email}, tack.', 'E-post: {email}'],
    iban: ['För över återbetalningen till {iban}.', 'IBAN: {iban} (kontoinnehavare {who})'],
    ip: ['Inloggningen från {ip} kl {time} var inte jag.', 'Webhooken kommer från {ip}.'],
    negative: [
      'Order {order} skickades {date} kl {time}, spårningsnummer {tracking}.',
      'Faktura {invoice} på {amount} förfaller {date}.',
      'Appversion {version}, build {ts}, begäran {uuid}.',
      'Boken (ISBN {isbn}) levererades till {coords}.',
      'Ordernummer {order} från {date}.',
    ],
  },
};

// Look-alikes in any language: a negative word before a phone-shaped number wins.
// {=class:text} is a literal negative of that class.
const HARD_NEGATIVES = [
  'Order {=order:0612345678} was cancelled.',
  'Invoice {=invoice:415-555-0132} is paid.',
  'Tracking: {=tracking:9400 1112 0202 3344 5566 77}',
  'Ref {=order:030 1234567} / case {=order:48213377}',
  'Ticket #{=order:7788 9900} closed.',
  'Customer no. {=order:0170 1234567} (not a phone)',
  'Build {=version:2024.11.29.1432}, released {=date:2024-11-29} {=time:10:30:45Z}, coordinates {=coordinates:52.5200, 13.4050}',
  'Total: {=amount:1 234 567 €} — ratio 16:9 — version {=version:10.4.12} — 3.14159265',
  'ISBN {=isbn:978-3-16-148410-0} and ISBN {=isbn:0-306-40615-2}',
  'Sendungsnummer {=tracking:00340434161094042557}, Rechnungsnummer {=invoice:2024-000123}',
  'Numéro de commande {=order:0612345678}, facture {=invoice:FAC-2024-0042}',
  'Pedido {=order:600 123 456} anulado; importe {=amount:1.234.567,89 €}',
  'Order number {=order:9472 7916}, invoice no. {=invoice:723 813 266}',
  // plain numbers where a phone word or a phone shape is near, but no phone
  'The answer is {=count:12 345 678}.',
  'The number is {=count:4155550132}, as computed.',
  'Population: {=count:8 336 817} (census {=date:2020}).',
  'We reached {=count:10 000 000} users on {=date:2024-03-01}.',
  'Call duration {=count:1234567} ms, {=count:98 765 432} calls in total.',
  'Please call back at {=time:14:30} on {=date:15.01.2024}.',
  'Call me on {=date:2024-01-15} at {=time:10:30}.',
  'Mobile app version {=version:10.4.12} build {=version:2024.11.29}.',
  'The phone costs {=amount:1.299,00 €}; text {=count:42} to subscribe.',
  'Office at {=coordinates:48.8566, 2.3522}, opened {=date:01-02-2024}.',
  'Ring buffer of {=count:16777216} bytes, {=count:1 048 576} entries.',
  'Kontakt seit {=date:15.01.2024}, Umsatz {=amount:1.234.567,89 €}.',
];

// ---------------------------------------------------------------------------------------------
// Values

interface Value {
  text: string;
  kind?: PiiKind;
  negative?: NegativeClass;
}

/** A digit string with Luhn check digit appended. */
function withLuhn(body: string): string {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let v = body.charCodeAt(body.length - 1 - i) - 48;
    if (i % 2 === 0) {
      v *= 2;
      if (v > 9) v -= 9;
    }
    sum += v;
  }
  return body + String((10 - (sum % 10)) % 10);
}

/** Real networks not in faker's list, as [prefix, length] (Wikipedia IIN table). */
const REGIONAL_NETWORKS: readonly (readonly [string, number])[] = [
  ['1800', 15], // JCB 15-digit
  ['2131', 15], // JCB 15-digit
  ['5018', 12], // Maestro
  ['5020', 12],
  ['5038', 13],
  ['6304', 12],
  ['6759', 12],
  ['6761', 12],
  ['6763', 19],
  ['2200', 16], // Mir
  ['2204', 19],
  ['62', 16], // UnionPay
  ['62', 19],
  ['60', 16], // RuPay
  ['81', 16],
  ['9792', 16], // Troy
  ['1', 15], // UATP
  ['6362', 16], // Elo
  ['506099', 16], // Verve
  ['9860', 16], // Humo
  ['9704', 16], // Napas
  ['8600', 16], // Uzcard
  ['5019', 16], // Dankort
  ['357111', 16], // LankaPay
  ['2205', 16], // BORICA
  ['31', 19], // China T-Union
];

/** Numbers outside every real IIN that generators and regional schemes write. */
const GENERATOR_ONLY: readonly (readonly [string, number])[] = [
  ['3521', 16],
  ['3598', 16],
  ['3501', 16],
  ['0604', 12],
  ['7777', 16],
];

const FAKER_ISSUERS = ['visa', 'mastercard', 'discover', 'american_express', 'diners_club', 'jcb'];

function grouped(f: Faker, digits: string): string {
  switch (f.number.int(3)) {
    case 0:
      return digits;
    case 1:
      return digits.replace(/(\d{4})(?=\d)/g, '$1 ');
    case 2:
      return digits.replace(/(\d{4})(?=\d)/g, '$1-');
    default:
      return digits.length === 15 ? `${digits.slice(0, 4)} ${digits.slice(4, 10)} ${digits.slice(10)}` : digits;
  }
}

function fromPrefix(f: Faker, prefix: string, length: number): string {
  return withLuhn(prefix + f.string.numeric({ length: length - prefix.length - 1, allowLeadingZeros: true }));
}

function realCard(f: Faker): string {
  if (f.datatype.boolean({ probability: 0.6 })) {
    const n = f.finance.creditCardNumber(f.helpers.arrayElement(FAKER_ISSUERS));
    // faker writes dashes; people also write spaces or nothing
    const r = f.number.int(2);
    return r === 0 ? n : r === 1 ? n.replace(/-/g, ' ') : n.replace(/-/g, '');
  }
  const [prefix, length] = f.helpers.arrayElement(REGIONAL_NETWORKS);
  return grouped(f, fromPrefix(f, prefix, length));
}

function anyCard(f: Faker): string {
  if (f.datatype.boolean({ probability: 0.8 })) return realCard(f);
  const [prefix, length] = f.helpers.arrayElement(GENERATOR_ONLY);
  return grouped(f, fromPrefix(f, prefix, length));
}

function pad(n: number, w = 2): string {
  return String(n).padStart(w, '0');
}

function negativeValue(f: Faker, slot: NegativeClass | 'ts'): Value {
  const d = f.date.between({ from: '2019-01-01T00:00:00Z', to: '2027-12-31T00:00:00Z' });
  const [y, m, day] = [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()];
  const [h, mi, s] = [d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()];
  const pick = <T>(xs: readonly T[]) => f.helpers.arrayElement(xs);
  switch (slot) {
    case 'date':
      return {
        negative: 'date',
        text: pick([
          `${y}-${pad(m)}-${pad(day)}`,
          `${pad(day)}.${pad(m)}.${y}`,
          `${pad(m)}/${pad(day)}/${y}`,
          `${pad(day)}/${pad(m)}/${y}`,
          `${y}/${pad(m)}/${pad(day)}`,
          `${pad(day)}-${pad(m)}-${y}`,
          d.toISOString(),
          `${y}${pad(m)}${pad(day)}`,
        ]),
      };
    case 'time':
      return { negative: 'time', text: pick([`${pad(h)}:${pad(mi)}`, `${pad(h)}:${pad(mi)}:${pad(s)}`, `${pad(h)}h${pad(mi)}`, `${pad(h)}.${pad(mi)}`]) };
    case 'version':
      return {
        negative: 'version',
        text: pick([
          f.system.semver(),
          `v${f.system.semver()}`,
          `${y}.${pad(m)}.${pad(day)}`,
          `${f.number.int(30)}.${f.number.int(20)}.${f.number.int(9999)}`,
          `${f.number.int(9)}.${f.number.int(9)}.${f.number.int(9)}.${f.number.int(99999)}`,
        ]),
      };
    case 'amount': {
      const whole = f.number.int({ min: 1000, max: 99_999_999 });
      const cents = pad(f.number.int(99));
      const spaced = whole.toLocaleString('fr-FR').replace(/\u202f|\u00a0/g, ' ');
      const dotted = whole.toLocaleString('de-DE');
      const commas = whole.toLocaleString('en-US');
      return {
        negative: 'amount',
        text: pick([
          `$${commas}.${cents}`,
          `${dotted},${cents} €`,
          `${spaced} €`,
          `${spaced},${cents} zł`,
          `€ ${dotted},${cents}`,
          `R$ ${dotted},${cents}`,
          `${spaced} kr`,
          `CHF ${commas.replace(/,/g, "'")}.${cents}`,
          `${whole}.${cents} EUR`,
        ]),
      };
    }
    case 'uuid':
      return { negative: 'uuid', text: f.string.uuid() };
    case 'isbn':
      return {
        negative: 'isbn',
        text: pick([f.commerce.isbn(13), f.commerce.isbn(10), f.commerce.isbn({ variant: 13, separator: '' }), f.commerce.isbn({ variant: 13, separator: ' ' })]),
      };
    case 'coordinates':
      return {
        negative: 'coordinates',
        text: pick([
          `${f.location.latitude()}, ${f.location.longitude()}`,
          `${f.location.latitude({ precision: 6 })},${f.location.longitude({ precision: 6 })}`,
          `lat ${f.location.latitude()} lon ${f.location.longitude()}`,
        ]),
      };
    case 'order':
      return {
        negative: 'order',
        text: pick([
          f.string.numeric(8),
          `#${f.string.numeric(7)}`,
          `${f.string.numeric(3)}-${f.string.numeric(7)}-${f.string.numeric(7)}`,
          `A-${f.string.numeric(6)}`,
          `${f.string.numeric(4)} ${f.string.numeric(4)}`,
          f.string.numeric(10),
        ]),
      };
    case 'invoice':
      return {
        negative: 'invoice',
        text: pick([`${y}-${f.string.numeric(6)}`, `INV-${y}-${f.string.numeric(5)}`, f.string.numeric(9), `${f.string.numeric(3)} ${f.string.numeric(3)} ${f.string.numeric(3)}`]),
      };
    case 'tracking':
      return {
        negative: 'tracking',
        text: pick([
          `1Z${f.string.alphanumeric({ length: 6, casing: 'upper' })}${f.string.numeric(10)}`,
          `${f.string.numeric(4)} ${f.string.numeric(4)} ${f.string.numeric(4)} ${f.string.numeric(4)} ${f.string.numeric(4)} ${f.string.numeric(2)}`,
          f.string.numeric(20),
          `JJD${f.string.numeric(18)}`,
          `${f.string.alpha({ length: 2, casing: 'upper' })}${f.string.numeric(9)}DE`,
        ]),
      };
    case 'timestamp':
    case 'ts':
      return { negative: 'timestamp', text: pick([String(d.getTime()), String(Math.floor(d.getTime() / 1000))]) };
    case 'count':
      return {
        negative: 'count',
        text: f.number
          .int({ min: 1_000_000, max: 99_999_999 })
          .toLocaleString('fr-FR')
          .replace(/\u202f|\u00a0/g, ' '),
      };
  }
}

function slotValue(loc: Locale, slot: string): Value {
  const f = loc.faker;
  switch (slot) {
    case 'phone': {
      const style = f.helpers.weightedArrayElement([
        { weight: 5, value: 'human' as const },
        { weight: 3, value: 'national' as const },
        { weight: 2, value: 'international' as const },
      ]);
      return { text: f.phone.number({ style }), kind: 'phone' };
    }
    case 'card':
      return { text: realCard(f), kind: 'card' };
    case 'cardAny':
      return { text: anyCard(f), kind: 'card' };
    case 'email':
      return { text: f.internet.email(), kind: 'email' };
    case 'iban': {
      const country = f.datatype.boolean({ probability: 0.7 }) ? loc.country : undefined;
      return { text: f.finance.iban({ formatted: f.datatype.boolean(), countryCode: country }), kind: 'iban' };
    }
    case 'ip':
      return { text: f.datatype.boolean({ probability: 0.7 }) ? f.internet.ipv4() : f.internet.ipv6(), kind: 'ip' };
    case 'who':
      return { text: f.person.firstName() };
    case 'coords':
      return negativeValue(f, 'coordinates');
    case 'ts':
      return negativeValue(f, 'timestamp');
    default:
      return negativeValue(f, slot as NegativeClass);
  }
}

function fill(loc: Locale, template: string, msg: LabelledMessage): void {
  let last = 0;
  for (const m of template.matchAll(/\{(=?\w+)(?::([^}]*))?\}/g)) {
    msg.text += template.slice(last, m.index);
    const v: Value = m[1][0] === '=' ? { text: m[2], negative: m[1].slice(1) as NegativeClass } : slotValue(loc, m[1]);
    const start = msg.text.length;
    msg.text += v.text;
    if (v.kind) msg.spans.push({ start, end: msg.text.length, kind: v.kind });
    if (v.negative) msg.negatives.push({ start, end: msg.text.length, kind: v.negative });
    last = m.index + m[0].length;
  }
  msg.text += template.slice(last);
}

/** Which template group a message sentence comes from, with weights (phones and cards lead). */
const GROUPS: readonly { weight: number; value: keyof Templates }[] = [
  { weight: 28, value: 'phone' },
  { weight: 7, value: 'phoneBare' },
  { weight: 14, value: 'card' },
  { weight: 7, value: 'cardBare' },
  { weight: 8, value: 'email' },
  { weight: 8, value: 'iban' },
  { weight: 8, value: 'ip' },
  { weight: 20, value: 'negative' },
];

/** `count` labelled messages, spread evenly over the locales; the same for the same seed. */
export function generatePiiCorpus(count = CORPUS_MESSAGES, seed = CORPUS_SEED): LabelledMessage[] {
  LOCALES.forEach((loc, i) => loc.faker.seed(seed + i));
  const out: LabelledMessage[] = [];
  for (let n = 0; n < count; n++) {
    const loc = LOCALES[n % LOCALES.length];
    const f = loc.faker;
    const msg: LabelledMessage = { locale: loc.name, text: '', spans: [], negatives: [] };
    const sentences = f.number.int({ min: 1, max: 3 });
    for (let s = 0; s < sentences; s++) {
      if (s > 0) msg.text += f.helpers.arrayElement([' ', ' ', '\n', '\n\n']);
      if (f.datatype.boolean({ probability: 0.03 })) {
        fill(loc, f.helpers.arrayElement(HARD_NEGATIVES), msg);
        continue;
      }
      const group = f.helpers.weightedArrayElement(GROUPS as { weight: number; value: keyof Templates }[]);
      fill(loc, f.helpers.arrayElement(TEMPLATES[loc.lang][group]), msg);
    }
    out.push(msg);
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const count = Number(process.argv[2] ?? CORPUS_MESSAGES);
  const seed = Number(process.argv[3] ?? CORPUS_SEED);
  for (const m of generatePiiCorpus(count, seed)) process.stdout.write(`${JSON.stringify(m)}\n`);
}
