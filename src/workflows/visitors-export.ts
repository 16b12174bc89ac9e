export { visitorsExport } from './visitors-export/workflow';
