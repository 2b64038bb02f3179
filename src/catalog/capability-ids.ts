// The service-side capabilities an agent can be given (priced in capabilities.json, run by
// src/tools/capabilities/): one list for the agent contract, the tools and the price table.

export const CAPABILITY_IDS = [
  'exa.search',
  'exa.contents',
  'tinyfish.fetch',
  'tinyfish.browser',
  'dataforseo.serp',
  'gptimage.generate',
  'rembg.remove-background',
  'seedance.generate',
  'mm.i2v',
  'fish-audio.transcribe',
] as const;
export type CapabilityId = (typeof CAPABILITY_IDS)[number];
