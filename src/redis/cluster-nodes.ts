import type { Cluster, Redis } from 'ioredis';

/**
 * Opens the connections to a cluster's masters that are not open yet. Resolves once each of
 * them is ready or has failed (a failed one fails the commands routed to it, which the caller
 * handles as Redis away); answers undefined when every master's connection is ready already.
 *
 * The client opens a master's connection on the first command routed to it. While it opens,
 * the client turns away the commands routed there and sends them again after a delay, in no
 * particular order; so a caller whose commands must run in the order sent (the ops of one state
 * record) opens the connections first. Only a ready cluster is asked: opening a node while the
 * client checks the cluster's state fails that check.
 */
export function mastersOpened(cluster: Cluster): Promise<void> | undefined {
  if (cluster.status !== 'ready') return undefined;
  let opening: Promise<void>[] | undefined;
  for (const node of cluster.nodes('master')) {
    if (node.status === 'ready') continue;
    (opening ??= []).push(opened(node));
  }
  return opening && Promise.all(opening).then(() => undefined);
}

function opened(node: Redis): Promise<void> {
  if (node.status === 'close' || node.status === 'end') return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      node.off('ready', done);
      node.off('close', done);
      resolve();
    };
    node.once('ready', done);
    node.once('close', done);
    if (node.status === 'wait') node.connect().catch(() => undefined);
  });
}

/** `text` with the glob characters of SCAN's MATCH escaped, so it matches itself. */
export const globLiteral = (text: string): string => text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);

/**
 * The keys matching `pattern` (a SCAN MATCH glob), page by page: on a standalone server, or on
 * each master of a cluster in turn (SCAN walks one node's keyspace).
 */
export async function* scanKeys(client: Redis | Cluster, pattern: string): AsyncGenerator<string[]> {
  let nodes: Redis[];
  if (client.isCluster) {
    const cluster = client as Cluster;
    await mastersOpened(cluster);
    nodes = cluster.nodes('master');
  } else nodes = [client as Redis];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) yield keys;
    } while (cursor !== '0');
  }
}

/** Every text a key holds: a hash's fields and values, a set's or sorted set's members, a list's items, a string. */
export async function textsOfKey(client: Redis | Cluster, key: string): Promise<string[]> {
  switch (await client.type(key)) {
    case 'hash':
      return Object.entries(await client.hgetall(key)).flat();
    case 'zset':
      return client.zrange(key, 0, -1);
    case 'set':
      return client.smembers(key);
    case 'list':
      return client.lrange(key, 0, -1);
    case 'string':
      return [(await client.get(key)) ?? ''];
    default:
      return [];
  }
}
