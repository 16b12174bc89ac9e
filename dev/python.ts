/**
 * The Python interpreter that has the test tools of `.ci/python-test-requirements.txt` (moto's S3 server, the
 * Temporal Python SDK): `.ci/run` installs them into a virtual environment and exports TEST_PYTHON; on a developer's
 * machine with them installed, python3 from PATH. Tests and benchmarks both start moto with it.
 */
export function testPython(): string {
  return process.env.TEST_PYTHON ?? 'python3';
}
