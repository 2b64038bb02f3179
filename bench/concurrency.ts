// Many sessions at once (issue #29: turn overhead flat as concurrent turns grow), beside the
// machine's limit for the same event volume. The service runs as its own process (src/main.ts,
// as `npm start`), so the client does not share its event loop; the fake provider streams each
// answer as 10 words over ≈ 1 s. For each level C: C sessions with one SSE stream each, then C
// sends at once; per turn the send → first frame (session.status_running) and send →
// session.status_idle times, and the side's CPU time. Every process runs with
// bench/statement-counter.ts preloaded: SQL statements per turn (by kind) and its memory after a
// full GC, from which the memory per idle session and per open stream.
// Per level, one after the other (bench/concurrency-bench.ts), after a warm-up level (C = 10) each:
//  - service: one process (bench/concurrency-sides.ts);
//  - limit: bench/concurrency-limit.ts, a bare node:http server storing the same 14 events per
//    turn, every session's events of a tick in ONE statement, written to the same open streams
//    (PostgreSQL only), and the ratio of the service's CPU per turn to the limit's;
//  - service × N: N service processes on one PostgreSQL + Redis, session i sent to process i % N
//    and streamed from process (i + 1) % N, and its turns/s ÷ the one process's.
// Run alone (`npm run bench:concurrency`) or as a part of `npm run bench` (BENCH_ONLY=concurrency).
// Knobs: BENCH_CONCURRENCY=10,50,200,1000 picks the levels (default 10,50,200); BENCH_WARMUP=n the
// untimed rounds before them (default 3, at the highest level up to 200);
// BENCH_PROCESSES=N the service × N side (default 2 when TEST_DATABASE_URL and TEST_REDIS_URL
// are set, otherwise 1: none); BENCH_CPU_PROF=dir writes the one-process service's CPU profile
// there (node --cpu-prof); BENCH_NODE_ARGS node flags for that process; BENCH_STATEMENTS=1 also
// prints each level's statements per turn by kind (=where: by statement text, with its caller); BENCH_DEBUG=1 prints a stream ≠ history case and
// the send → model request percentiles (the turn starts' share); BENCH_WORDS=n streams n chunks a
// turn instead of 10 (1 against 10: what a streamed chunk costs beside a turn's fixed cost).
// TEST_DATABASE_URL / TEST_REDIS_URL: PostgreSQL and Redis (DATABASE_POOL_SIZE passes through).
import { concurrencyBench } from './concurrency-bench.js';

await concurrencyBench((line) => console.log(line));
process.exit(0);
