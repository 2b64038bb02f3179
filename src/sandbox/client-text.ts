// What a client may read of a sandbox failure: the host's own paths are not its business (an
// outside fuzz found `session.error` messages naming DATA_DIR, e.g. ENAMETOOLONG on
// `/srv/data/sandboxes/sess_…/workspace/…`). A session's workspace is named as the sandbox sees
// it (/workspace), anything else under the data directory as $DATA_DIR.
import path from 'node:path';

const literalPattern = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `message` with the host's paths under `dataDir` replaced as above. */
export function sandboxClientText(message: string, dataDir: string): string {
  const root = path.resolve(dataDir);
  if (!message.includes(root)) return message;
  return message
    .replace(new RegExp(`${literalPattern(path.join(root, 'sandboxes'))}/[^/\\s'"]+/workspace`, 'g'), '/workspace')
    .replace(new RegExp(literalPattern(root), 'g'), '$DATA_DIR');
}
