// Baseline: a bare Fastify route that parses the same JSON and answers 202.
import Fastify from 'fastify';

const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
app.post('/v1/events', async (request, reply) => {
  reply.code(202);
  return { status: 'accepted', received: typeof request.body === 'object' };
});
app.post('/v1/events/batch', async (request, reply) => {
  reply.code(202);
  const events = (request.body as { events?: unknown[] }).events ?? [];
  return { status: 'accepted', accepted: events.length };
});
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.stdout.write(`listening ${(app.server.address() as { port: number }).port}\n`);
