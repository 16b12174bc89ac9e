import type { Client } from '@temporalio/client';

/** What every CLI command gets: a lazily connected client and the task queue to start workflows on. */
export interface CommandContext {
  client: () => Promise<Client>;
  taskQueue: string;
}
