import { idleUntilPoked } from './idle';

export const idleWorkflow = () => idleUntilPoked((value) => value.length > 0);
