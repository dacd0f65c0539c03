import 'reflect-metadata';
import { runProcess } from '@tributary/platform';
import { tributarySurfaces } from './tributary.surfaces';

// HTTP first, then the router, then the log and the store; exit 0 within 10 s (see its doc).
runProcess('tributary', tributarySurfaces, (environment) => ` (data in ${environment.DATA_DIR})`);
