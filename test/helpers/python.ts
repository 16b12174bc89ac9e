// The interpreter lives in dev/ so that benchmarks (which never import test/) start moto with it too.
export { testPython } from '../../dev/python';
