// Prisma 7 reads the datasource URL here. Only `prisma generate` runs through the CLI in this
// project (migrations use our WebAssembly-engine migrator), so a placeholder URL is fine.
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://localhost/unused' },
});
