// Streams many tiny deltas as fewer events: text is flushed every `intervalMs` (and on demand),
// so a long answer is a handful of stored events rather than one per token.
const noop = () => undefined;

export class StreamCoalescer {
  private buffer = '';
  private index = 0;
  private timer: NodeJS.Timeout | null = null;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly sink: (chunk: string, index: number) => Promise<void>,
    private readonly intervalMs = 40,
  ) {}

  push(text: string): void {
    if (!text) return;
    this.buffer += text;
    if (this.index === 0 && !this.timer) {
      // The first chunk goes out at once: latency to the first frame matters most.
      this.drain();
      return;
    }
    this.timer ??= setTimeout(() => this.drain(), this.intervalMs);
  }

  private drain(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!this.buffer) return;
    const chunk = this.buffer;
    this.buffer = '';
    const index = this.index++;
    this.chain = this.chain.then(() => this.sink(chunk, index));
    // A failed commit is flush()'s to report; when the step fails first and never flushes, it
    // must not surface later as an unhandled rejection.
    this.chain.catch(noop);
  }

  async flush(): Promise<void> {
    this.drain();
    await this.chain;
  }
}
