// DynamoDBLocal.jar has no option for the address it listens on (`-help` lists none) and its
// Jetty server binds every interface; it checks no signature, so anyone on the network could read
// the tables. This launcher builds the server as the jar's own main does, moves its one connector
// to 127.0.0.1 before it starts, and leaves out the jar's telemetry (configured by its main only).
//
// It is compiled when the package is built (scripts/build-java.js, `javac --release 17`), so a
// Java 17 runtime runs it: source-file mode would need a JDK's compiler on every machine.
//
// The parent (tidewater, through dynamodb-local.ts) holds this process's stdin open and never
// writes to it; stdin reaches end-of-file when the parent exits however it exits, SIGKILL
// included, and the server then stops: DynamoDB Local never outlives the process that started it.

import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

public class LoopbackDynamoDbLocal {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    java.lang.reflect.Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Connector[] connectors = ((Server) field.get(proxy)).getConnectors();
    if (connectors.length == 0) throw new IllegalStateException("no connector to bind");
    for (Connector connector : connectors) ((ServerConnector) connector).setHost("127.0.0.1");
    proxy.start();
    byte[] sink = new byte[256];
    try {
      while (System.in.read(sink) >= 0) {
        // Nothing is ever written; whatever is, is dropped.
      }
    } catch (java.io.IOException gone) {
      // A broken pipe is the parent gone as well.
    }
    System.exit(0);
  }
}
