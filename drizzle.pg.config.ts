// PostgreSQL migrations, side by side with the SQLite ones (drizzle.config.ts → drizzle/):
// `npm run db:generate` writes both (DESIGN: Storage).
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './db/schema-pg.ts',
  out: './drizzle/pg',
});
