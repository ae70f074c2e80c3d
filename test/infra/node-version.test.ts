import t from 'tap';

// The project runs on Node 24 LTS, pinned in package.json (optionalDependencies node-linux-*),
// so every npm script finds it first on its PATH; Node 20 is past its end of life.
t.test('the suite runs on Node 24 or later', async (t) => {
  const major = Number(process.versions.node.split('.')[0]);
  t.ok(major >= 24, `running on Node ${process.versions.node}`);
});
