// tap's `before` (.taprc): runs once before any test file, and stops the run at once when
// PostgreSQL, Redis or Chromium is missing, one line each with the command that starts or installs it.
import { missingPrerequisites } from './prerequisites.ts';

const missing = await missingPrerequisites();
if (missing.length > 0) {
  console.error(
    `The tests cannot run: ${missing.length === 1 ? 'one thing they need is' : 'things they need are'} missing (.ci/run starts or installs all of them):`,
  );
  for (const line of missing) console.error(`- ${line}`);
  process.exit(1);
}
