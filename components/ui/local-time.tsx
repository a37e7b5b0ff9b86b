// A timestamp in the reader's own time zone. The server renders it in its zone; the browser's
// differs, so hydration is told not to mind the text.
export function LocalTime({ ms, withDate = false }: { ms: number | null | undefined; withDate?: boolean }) {
  if (ms == null) return <span className="muted">—</span>;
  const d = new Date(ms);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  const date = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  return (
    <time dateTime={d.toISOString()} title={d.toISOString()} suppressHydrationWarning>
      {withDate ? `${date} ${time}` : time}
    </time>
  );
}
