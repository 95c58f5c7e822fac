/** Types shared by the app and the route modules. */
import type { Area } from '../storage/admin/admin-store.js';

/** Who a valid token speaks for. */
export interface Principal {
  user: string;
  entity: string;
  area: Area;
}

/** Hono environment: what middleware puts in the context. */
export interface AppEnv {
  Variables: {
    principal: Principal;
  };
}
