import { open } from 'node:fs/promises';

/**
 * A whole file in one read call. `fs.promises.readFile` reads in 512 KiB pieces, each a trip
 * through the event loop: at start-up the loop is busy decoding other data, so every piece of a
 * large file (the shipped GeoIP data) waits behind that work.
 */
export async function readWholeFile(path: string): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const buffer = Buffer.allocUnsafe(size);
    let offset = 0;
    while (offset < size) {
      const { bytesRead } = await handle.read(buffer, offset, size - offset, offset);
      if (bytesRead === 0) break;
      offset += bytesRead;
    }
    return offset === size ? buffer : buffer.subarray(0, offset);
  } finally {
    await handle.close();
  }
}
