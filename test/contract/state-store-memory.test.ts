import { MemoryStateStore } from '../../src/detection/state/memory-state-store.js';
import { ManualClock } from '../../src/util/clock.js';
import { stateStoreContract } from './state-store.contract.js';

stateStoreContract('memory', () => {
  const clock = new ManualClock();
  return { store: new MemoryStateStore({ clock, sweepIntervalMs: 0 }), advanceWallMs: (ms) => clock.advance(ms) };
});
