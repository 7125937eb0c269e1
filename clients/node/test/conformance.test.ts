import { afterAll, beforeAll, describe, it } from 'vitest';
import { Vigil } from '../src/index.js';
import { replay } from '../../core/test/harness.js';
import { loadScenarios, startScriptedServer, type Running } from '../../core/test/processes.js';

describe('conformance scenarios: Node client', () => {
  let server: Running<{ port: number }>;
  beforeAll(async () => {
    server = await startScriptedServer();
  });
  afterAll(() => server.stop());

  for (const scenario of loadScenarios()) {
    it(scenario.name, () => replay(scenario, `http://127.0.0.1:${server.info.port}`, (options) => new Vigil(options)));
  }
});
