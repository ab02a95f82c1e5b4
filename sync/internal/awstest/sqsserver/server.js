// Starts local-aws-sqs (pinned in package-lock.json) on 127.0.0.1:PORT for the sync/ tests
// (awstest.StartSQS) and prints "ready" once it listens. Usage: node server.js PORT
const { createSqsServer } = require("local-aws-sqs");

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port <= 0) {
  console.error("usage: node server.js PORT");
  process.exit(2);
}
createSqsServer({ port, hostname: "127.0.0.1", emulateQueueCreationLifecycle: false }).then(
  () => console.log("ready"),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
