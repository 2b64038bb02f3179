// An OTLP/HTTP trace receiver on a real port, for tests: takes what the OpenTelemetry exporter
// POSTs to /v1/traces (its JSON encoding, typed by the official @opentelemetry/otlp-transformer
// definitions) and keeps every span flattened with its resource. `mode`: answer at once (200),
// refuse (503) or hang (never answer: an exporter that is down or slow).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { IExportTraceServiceRequest } from '@opentelemetry/otlp-transformer/build/src/trace/internal-types.js';
import type { IAnyValue, IKeyValue } from '@opentelemetry/otlp-transformer/build/src/common/internal-types.js';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, string | number | boolean | null>;
  status: { code: number; message?: string };
  resource: Record<string, string | number | boolean | null>;
}

export interface OtlpReceiver {
  url: string; // the traces URL (…/v1/traces)
  base: string; // the OTEL_EXPORTER_OTLP_ENDPOINT value
  spans: ReceivedSpan[];
  requests: number;
  mode: 'ok' | 'refuse' | 'hang';
  close(): Promise<void>;
}

function anyValue(v: IAnyValue | undefined): string | number | boolean | null {
  if (!v) return null;
  if (v.stringValue !== undefined && v.stringValue !== null) return v.stringValue;
  if (v.intValue !== undefined && v.intValue !== null) return Number(v.intValue);
  if (v.doubleValue !== undefined && v.doubleValue !== null) return v.doubleValue;
  if (v.boolValue !== undefined && v.boolValue !== null) return v.boolValue;
  return JSON.stringify(v);
}

function attrs(list: IKeyValue[] | undefined): Record<string, string | number | boolean | null> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, anyValue(kv.value)]));
}

const hex = (id: string | Uint8Array | undefined) => (id === undefined ? undefined : typeof id === 'string' ? id : Buffer.from(id).toString('hex'));

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const hanging: http.ServerResponse[] = [];
  const receiver: OtlpReceiver = { url: '', base: '', spans: [], requests: 0, mode: 'ok', close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      receiver.requests++;
      if (receiver.mode === 'hang') return void hanging.push(res);
      if (receiver.mode === 'refuse') return void res.writeHead(503).end();
      if (req.url !== '/v1/traces' || !String(req.headers['content-type']).includes('json')) return void res.writeHead(415).end();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as IExportTraceServiceRequest;
      for (const rs of body.resourceSpans ?? []) {
        const resource = attrs(rs.resource?.attributes);
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans ?? []) {
            receiver.spans.push({
              traceId: hex(s.traceId)!,
              spanId: hex(s.spanId)!,
              parentSpanId: hex(s.parentSpanId) || undefined,
              name: s.name,
              kind: s.kind,
              startNs: BigInt(String(s.startTimeUnixNano)),
              endNs: BigInt(String(s.endTimeUnixNano)),
              attributes: attrs(s.attributes),
              status: { code: s.status?.code ?? 0, message: s.status?.message },
              resource,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  receiver.base = `http://127.0.0.1:${port}`;
  receiver.url = `${receiver.base}/v1/traces`;
  receiver.close = async () => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}
