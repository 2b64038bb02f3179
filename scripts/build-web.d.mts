// Types of scripts/build-web.mjs for the TypeScript callers (tests build the assets when stale).
export const WEB_DIST: string;
export function sourceHash(): string;
export function buildWeb(opts?: { ifStale?: boolean }): Promise<{ built: boolean; ms?: number; appBytes?: number }>;
