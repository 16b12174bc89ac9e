/**
 * Holds an activity at its start until the test lets it go, keyed by what the activity acts on (a project id).
 * A held local activity keeps its workflow task open; a held activity keeps its workflow between tasks.
 */
export class ActivityGate {
  readonly #held = new Map<string, { entered: () => void; opened: Promise<void> }>();

  /** The next activity that passes `key` waits until `release` (once: a retry of it is not held again). */
  hold(key: string): { entered: Promise<void>; release: () => void } {
    let entered!: () => void;
    let release!: () => void;
    const enteredPromise = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const opened = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.#held.set(key, { entered, opened });
    return { entered: enteredPromise, release };
  }

  /** Called by the wrapped activity before it does its work. */
  async pass(key: string): Promise<void> {
    const gate = this.#held.get(key);
    if (!gate) return;
    this.#held.delete(key);
    gate.entered();
    await gate.opened;
  }
}
