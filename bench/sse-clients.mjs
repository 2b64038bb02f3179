// Opens N SSE connections to one URL in a separate process (so the server's memory and CPU are
// measured alone) and prints, as JSON lines, the wall-clock time each one saw a given event.
import http from 'node:http';

const [url, token, count, eventType] = process.argv.slice(2);
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
let open = 0;
for (let i = 0; i < Number(count); i++) {
  const req = http.get(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
    if (++open === Number(count)) process.stdout.write(JSON.stringify({ open }) + '\n');
    let buf = '';
    res.setEncoding('utf8');
    res.on('data', (chunk) => {
      buf += chunk;
      let k;
      while ((k = buf.indexOf('\n\n')) !== -1) {
        const frame = buf.slice(0, k);
        buf = buf.slice(k + 2);
        if (frame.includes(`event: ${eventType}`)) process.stdout.write(JSON.stringify({ at: performance.timeOrigin + performance.now() }) + '\n');
      }
    });
  });
  req.on('error', (err) => process.stderr.write(String(err) + '\n'));
}
