// The FormData a form posts, from its fields (a list for a field sent more than once).
export function formData(values: Record<string, string | readonly string[]>): FormData {
  const fd = new FormData();
  for (const [k, v] of Object.entries(values)) for (const one of typeof v === 'string' ? [v] : v) fd.append(k, one);
  return fd;
}
