// Fuzz test of the loader (DESIGN: Limits), a seeded sample: the first 250 files of the fixed seed's
// sequence (test/helpers/loader-fuzz.ts); the load project's lib/project/fuzz.load.test.ts loads 1,000.
import { describeLoaderFuzz } from '@/test/helpers/loader-fuzz';

// about 7 s on a quiet machine; the codes it must reach all appear by the 225th file
describeLoaderFuzz(250, 60_000);
