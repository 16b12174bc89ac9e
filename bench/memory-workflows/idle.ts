import { condition, defineSignal, setHandler } from '@temporalio/workflow';

export const pokeSignal = defineSignal<[string]>('poke');

/**
 * Waits for signals until `accept` has approved 1,000 of them: a workflow that stays in the worker's cache
 * and does nothing, so what it costs there is what loading its bundle costs.
 */
export async function idleUntilPoked(accept: (value: string) => boolean): Promise<number> {
  let accepted = 0;
  setHandler(pokeSignal, (value) => {
    if (accept(value)) accepted += 1;
  });
  await condition(() => accepted >= 1000);
  return accepted;
}
