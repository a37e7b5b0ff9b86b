// Fuzz test of the loader (DESIGN: Limits), the thousand files of the fixed seed's sequence
// (test/helpers/loader-fuzz.ts): `npm run test:load`. The unit project keeps the first 250.
import { describeLoaderFuzz } from '@/test/helpers/loader-fuzz';

// about 25 s on a quiet machine
describeLoaderFuzz(1_000, 120_000);
