// A form's posted fields as a contract's input: each by name, as typed; an absent one undefined
// (the contract says what is missing).

export function formFields<K extends string>(fd: FormData, names: readonly K[]): Record<K, string | undefined> {
  return Object.fromEntries(names.map((n) => [n, (fd.get(n) ?? undefined) as string | undefined])) as Record<K, string | undefined>;
}
