import { execFileSync } from 'node:child_process';
import net from 'node:net';

/** A TCP port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Whether something accepts connections on the port. */
export function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * freePort for options read before any hook runs (a stack's server flags): asks a short-lived node process, since
 * a port can only be bound asynchronously in this one.
 */
export function freePortSync(): number {
  const script =
    "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => " +
    '{ process.stdout.write(String(s.address().port)); s.close(); })';
  return Number(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }));
}
