// The client of tools/bench_serve: C concurrent streaming clients, each sending R /v1/completions
// requests one after another (a prompt of P random token ids, exactly G generated tokens:
// ignore_eos), a connection per request. Prints one JSON line: the aggregate output tokens/s over
// the whole run (the tokens each response's usage counts), the median time to first token, and the
// requests that failed or did not end by length. Plain node:http, no packages.
// Usage: node bench_serve_client.mjs BASE_URL C R P G SEED
import http from 'node:http';

const [base, C, R, P, G, SEED] = process.argv.slice(2);
const [clients, rounds, plen, gen] = [C, R, P, G].map(Number);
let seed = Number(SEED) >>> 0;
const rand = () => { seed = (seed * 1664525 + 1013904223) >>> 0; return seed / 4294967296; };
// a connection per request: llama-server closes idle keep-alive connections, which a reused socket
// meets as "socket hang up"
const agent = new http.Agent({ keepAlive: false, maxSockets: clients });
const url = new URL(base + '/v1/completions');

function one(prompt) {
  return new Promise((resolve) => {
    const body = JSON.stringify({ prompt, max_tokens: gen, ignore_eos: true, temperature: 0, stream: true,
                                 stream_options: { include_usage: true } });
    const t0 = performance.now();
    let first = 0, buf = '', tokens = 0, finish = null, usage = null, last = '';
    const rq = http.request(url, { method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (d) => {
        buf += d;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const ev = buf.slice(0, i); buf = buf.slice(i + 2);
          last = ev;
          if (!ev.startsWith('data: ') || ev === 'data: [DONE]') continue;
          const o = JSON.parse(ev.slice(6));
          if (o.usage) usage = o.usage.completion_tokens;
          for (const c of o.choices || []) {
            if (c.text) { if (!first) first = performance.now() - t0; tokens++; }
            if (c.finish_reason) finish = c.finish_reason;
          }
        }
      });
      res.on('end', () => {
        const ok = res.statusCode === 200 && finish === 'length';
        if (!ok) console.error(`a request: status ${res.statusCode}, finish ${finish}, ${usage ?? tokens} tokens, the last event: ${last.slice(0, 300)}`);
        resolve({ ok, ttft: first, tokens: usage ?? tokens });
      });
    });
    rq.on('error', (e) => { console.error(`a request: ${e.message}`); resolve({ ok: false, ttft: 0, tokens: 0 }); });
    rq.end(body);
  });
}

const prompts = [];
for (let i = 0; i < clients * rounds; i++) {
  const p = [];
  for (let k = 0; k < plen; k++) p.push(259 + Math.floor(rand() * 30000));
  prompts.push(p);
}
const t0 = performance.now();
const results = [];
await Promise.all(Array.from({ length: clients }, async (_, c) => {
  for (let r = 0; r < rounds; r++) results.push(await one(prompts[c * rounds + r]));
}));
const secs = (performance.now() - t0) / 1000;
const ttft = results.filter(r => r.ok).map(r => r.ttft).sort((a, b) => a - b);   // of the complete answers
const errors = results.filter(r => !r.ok).length;
const tokens = results.reduce((a, r) => a + r.tokens, 0);
console.log(JSON.stringify({ tokens_per_second: tokens / secs, seconds: secs, requests: results.length,
                             errors, median_ttft_ms: ttft[Math.floor(ttft.length / 2)] }));
agent.destroy();
