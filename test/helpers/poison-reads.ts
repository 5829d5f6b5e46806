// Every suite runs with the shared read buffer overwritten after each read
// (src/server/h2/shared-reads.ts): a view of it kept past its read makes a test fail rather
// than pass by chance. Services the suites start as processes get the same (service-process.ts).
process.env.H2_POISON_READS = '1';
