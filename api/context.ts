/** Types shared by the app and the route modules. */
import type { Principal } from './auth.js';

/** Hono environment: what middleware puts in the context. */
export interface AppEnv {
  Variables: {
    principal: Principal;
  };
}
