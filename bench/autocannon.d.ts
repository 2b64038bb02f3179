// autocannon ships no types; the bench uses only this much of it.
declare module 'autocannon' {
  interface Result {
    requests: { average: number };
    latency: { p99: number; p50: number };
    errors: number;
    non2xx: number;
  }
  function autocannon(opts: { url: string; headers?: Record<string, string>; connections?: number; duration?: number; pipelining?: number }): Promise<Result>;
  export default autocannon;
}
