import { z } from 'zod';
import { idleUntilPoked } from './idle';

const pokeSchema = z.string().min(1);

export const idleWorkflow = () => idleUntilPoked((value) => pokeSchema.safeParse(value).success);
