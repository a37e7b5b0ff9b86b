// An OTLP/HTTP collector for tests of traces (DESIGN: Observability, "Traces"): a node:http server
// on loopback taking `POST /v1/traces` as the OpenTelemetry exporter sends it (JSON, gzip or not)
// and decoding every span with its resource, attributes as plain values. Point
// OTEL_EXPORTER_OTLP_ENDPOINT at `url` and read `spans()`.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

type AnyValue = { stringValue?: string; intValue?: number | string; doubleValue?: number; boolValue?: boolean; arrayValue?: { values?: AnyValue[] } };
type KeyValue = { key: string; value: AnyValue };

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span */
  parentSpanId: string;
  name: string;
  /** 1 internal, 2 server, 3 client */
  kind: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, unknown>;
  status: { code: number; message?: string };
  events: { name: string; attributes: Record<string, unknown> }[];
  resource: Record<string, unknown>;
  scope: string;
}

function value(v: AnyValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(value);
  return null;
}

const attrs = (kvs: KeyValue[] | undefined) => Object.fromEntries((kvs ?? []).map((kv) => [kv.key, value(kv.value)]));
const ms = (nanos: string | number) => Number(BigInt(nanos) / 1_000_000n);

interface ExportBody {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: {
      scope?: { name?: string };
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        startTimeUnixNano: string;
        endTimeUnixNano: string;
        attributes?: KeyValue[];
        status?: { code?: number; message?: string };
        events?: { name: string; attributes?: KeyValue[] }[];
      }[];
    }[];
  }[];
}

function decode(body: ExportBody): ReceivedSpan[] {
  return (body.resourceSpans ?? []).flatMap((rs) =>
    (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s) => ({
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId ?? '',
        name: s.name,
        kind: s.kind,
        startMs: ms(s.startTimeUnixNano),
        endMs: ms(s.endTimeUnixNano),
        attributes: attrs(s.attributes),
        status: { code: s.status?.code ?? 0, ...(s.status?.message && { message: s.status.message }) },
        events: (s.events ?? []).map((e) => ({ name: e.name, attributes: attrs(e.attributes) })),
        resource: attrs(rs.resource?.attributes),
        scope: ss.scope?.name ?? '',
      })),
    ),
  );
}

export interface OtlpReceiver {
  /** the endpoint: OTEL_EXPORTER_OTLP_ENDPOINT */
  url: string;
  spans(): ReceivedSpan[];
  /** every export body as it arrived (decompressed), to look for text that must not be there */
  bodies(): string[];
  /** the headers of every export */
  headers(): IncomingHttpHeaders[];
  close(): Promise<void>;
}

export async function otlpReceiver(): Promise<OtlpReceiver> {
  const bodies: string[] = [];
  const headers: IncomingHttpHeaders[] = [];
  const spans: ReceivedSpan[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      const raw = Buffer.concat(chunks);
      const text = (req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
      bodies.push(text);
      headers.push(req.headers);
      spans.push(...decode(JSON.parse(text) as ExportBody));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => [...spans],
    bodies: () => [...bodies],
    headers: () => [...headers],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
