import { after, afterEach, before } from 'node:test';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../../dev/simulator';
import { api } from './http-client';

export interface SimulatorHarness {
  readonly sim: Simulator;
  /** The service's operations over real HTTP, with the simulator's key. */
  readonly ops: ReturnType<typeof api>;
}

/** One simulator for a test file (or suite): started before, reset after each test, closed after all. */
export function useSimulator(options: SimulatorOptions = {}): SimulatorHarness {
  let started: SimulatorHarness | undefined;
  before(async () => {
    const sim = await startSimulator(options);
    started = { sim, ops: api(sim) };
  });
  afterEach(() => started?.sim.reset());
  after(() => started?.sim.close());
  const get = (): SimulatorHarness => {
    if (!started) throw new Error('the simulator is not started yet: use it inside a test');
    return started;
  };
  return {
    get sim() {
      return get().sim;
    },
    get ops() {
      return get().ops;
    },
  };
}
