// Fork of a session with 10,000 events and a 50 MiB workspace (target p50 < 2 s on the embedded
// defaults): POST /v1/sessions/{id}/fork → 201 with the fork idle (history copied, workspace
// copied, sandbox provisioned). Beside it, in the same run: a plain session create → idle of the
// same agent (what any new session costs) and `cp -a` of the same workspace by the shell (the
// floor of copying the files).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { TestServer } from '../test/helpers/server.js';
import { prisma } from '../src/db/client.js';
import { storeEvents, type NewEvent } from '../src/events/store.js';
import { config } from '../src/config.js';

const EVENTS = Number(process.env.BENCH_FORK_EVENTS || 10_000);
const WORKSPACE_MIB = Number(process.env.BENCH_FORK_MIB || 50);
const RUNS = Number(process.env.BENCH_FORK_RUNS || 7);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const ms = (n: number) => `${n.toFixed(0)} ms`;

/** One turn's 8 events as hermes stores them: input, running, reasoning, a tool call and result, the answer (a chunk, then whole), idle. */
function turnEvents(turn: number): NewEvent[] {
  const text = `turn ${turn}: ${'lorem ipsum dolor sit amet '.repeat(8)}`;
  const callId = `toolu_${turn}`;
  return [
    { type: 'user.message', turn, fields: { content: [{ type: 'text', text: `question ${turn}` }] } },
    { type: 'session.status_running', turn, fields: {} },
    { type: 'agent.reasoning', turn, fields: { part: { type: 'reasoning', index: 0, text: 'thinking it over', redacted: false }, final: true } },
    {
      type: 'agent.tool_use',
      turn,
      fields: { part: { type: 'tool_call', index: 0, call_id: callId, tool_name: 'read_file', args: { path: `src/file-${turn % 100}.ts` } } },
    },
    {
      type: 'agent.tool_result',
      turn,
      fields: { part: { type: 'tool_result', index: 0, call_id: callId, tool_name: 'read_file', status: 'ok', result: { content: text } } },
    },
    { type: 'agent.message', turn, fields: { messageId: `msg_${turn}`, parts: [{ type: 'text', index: 0, text }], text, final: false } },
    { type: 'agent.message', turn, fields: { messageId: `msg_${turn}`, parts: [{ type: 'text', index: 0, text }], text, final: true } },
    { type: 'session.status_idle', turn, fields: { stop_reason: { type: 'end_turn' } } },
  ] as NewEvent[];
}

/** `MiB` of files under `dir`: 1,000 small source files and the rest in 256 KiB blobs. */
function fillWorkspace(dir: string, mib: number): void {
  fs.mkdirSync(path.join(dir, 'src'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'data'), { recursive: true });
  for (let i = 0; i < 1000; i++) fs.writeFileSync(path.join(dir, 'src', `file-${i}.ts`), `export const n${i} = ${i};\n`.repeat(20));
  const blob = 256 * 1024;
  for (let i = 0; i < (mib * 1024 * 1024) / blob; i++) fs.writeFileSync(path.join(dir, 'data', `blob-${i}.bin`), randomBytes(blob));
}

export async function forkBench(s: TestServer): Promise<[string, string][]> {
  const agent = (await s.api('POST', '/agents', { body: { displayName: 'Fork bench' } })).body.agent;
  const ready = async () => {
    const made = (await s.api('POST', '/sessions', { body: { agent: agent.id } })).body.session;
    for (let i = 0; i < 200 && (await s.api('GET', `/sessions/${made.id}`)).body.session.status === 'provisioning'; i++)
      await new Promise((r) => setTimeout(r, 25));
    return made as { id: string };
  };
  // 10,000 events in 1,250 whole turns, stored as the service stores them (batches of 800).
  const turns = Math.ceil(EVENTS / 8);
  const all: NewEvent[] = [];
  for (let t = 1; t <= turns; t++) all.push(...turnEvents(t));
  const withEvents = async (sessionId: string) => {
    for (let i = 0; i < all.length; i += 800) await storeEvents(prisma, sessionId, all.slice(i, i + 800));
    await prisma.session.update({ where: { id: sessionId }, data: { turnCount: turns } });
  };
  const workspaceOf = (sessionId: string) => path.join(config().dataDir, 'sandboxes', sessionId, 'workspace');
  // The source, and two halves of it: the same events with no files, the same files with no events.
  const source = await ready();
  await withEvents(source.id);
  const workspace = workspaceOf(source.id);
  fillWorkspace(workspace, WORKSPACE_MIB);
  const eventsOnly = await ready();
  await withEvents(eventsOnly.id);
  const filesOnly = await ready();
  execFileSync('cp', ['-a', `${workspace}/.`, `${workspaceOf(filesOnly.id)}/`]);
  /** POST /fork → 201 idle, in ms; the fork is deleted after. */
  const timedFork = async (sessionId: string, check?: (forkId: string) => Promise<void>) => {
    const t = performance.now();
    const res = await s.api('POST', `/sessions/${sessionId}/fork`, { body: {} });
    const took = performance.now() - t;
    if (res.status !== 201 || res.body.session.status !== 'idle') throw new Error(`fork answered ${res.status} ${JSON.stringify(res.body)}`);
    await check?.(res.body.session.id);
    await s.api('DELETE', `/sessions/${res.body.session.id}`);
    return took;
  };

  const fork: number[] = [];
  const forkEvents: number[] = [];
  const forkFiles: number[] = [];
  const create: number[] = [];
  const copy: number[] = [];
  let copied = 0;
  for (let run = -1; run < RUNS; run++) {
    // The fork, end to end over HTTP (a warm-up run first), and its two halves.
    const forkMs = await timedFork(source.id, async (forkId) => {
      copied = await prisma.sessionEvent.count({ where: { sessionId: forkId } });
    });
    const eventsMs = await timedFork(eventsOnly.id);
    const filesMs = await timedFork(filesOnly.id);
    let t: number;
    // A new session of the same agent, create → idle.
    t = performance.now();
    const made = (await s.api('POST', '/sessions', { body: { agent: agent.id } })).body.session;
    while ((await s.api('GET', `/sessions/${made.id}`)).body.session.status === 'provisioning') await new Promise((r) => setTimeout(r, 5));
    const createMs = performance.now() - t;
    await s.api('DELETE', `/sessions/${made.id}`);
    // The shell's copy of the same files.
    const dest = `${workspace}.copy`;
    t = performance.now();
    execFileSync('cp', ['-a', '--reflink=auto', workspace, dest]);
    const copyMs = performance.now() - t;
    fs.rmSync(dest, { recursive: true, force: true });
    if (run < 0) continue;
    fork.push(forkMs);
    forkEvents.push(eventsMs);
    forkFiles.push(filesMs);
    create.push(createMs);
    copy.push(copyMs);
  }
  for (const x of [source, eventsOnly, filesOnly]) await s.api('DELETE', `/sessions/${x.id}`);
  if (copied !== all.length) throw new Error(`the fork holds ${copied} events, not ${all.length}`);
  return [
    [
      `fork: ${all.length} events + ${WORKSPACE_MIB} MiB workspace, POST /fork → 201 idle (${RUNS} runs; target p50 < 2 s)`,
      `p50 ${ms(pct(fork, 50))}, max ${ms(Math.max(...fork))}`,
    ],
    [
      `  its halves: the ${all.length} events alone (empty workspace) / the ${WORKSPACE_MIB} MiB alone (no events)`,
      `p50 ${ms(pct(forkEvents, 50))} / ${ms(pct(forkFiles, 50))}`,
    ],
    ['  beside it: session create → idle, same agent', `p50 ${ms(pct(create, 50))}`],
    [`  beside it: cp -a of the same ${WORKSPACE_MIB} MiB workspace`, `p50 ${ms(pct(copy, 50))}`],
  ];
}
