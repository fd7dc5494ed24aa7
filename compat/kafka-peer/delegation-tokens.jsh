// The delegation-token cases compat/kafka-peer/delegation-tokens runs with Kafka's Admin client
// against Apache Kafka and against Sluice (-Db=BOOTSTRAP: a SASL_PLAINTEXT listener with PLAIN
// users admin, alice, bob, eve and SCRAM; delegation tokens enabled). One line per case.
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.token.delegation.*;
import java.util.*;
String B = System.getProperty("b");
Admin plain(String user) { return Admin.create(Map.of("bootstrap.servers", B, "security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "PLAIN", "sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"" + user + "\" password=\"" + user + "-secret\";", "default.api.timeout.ms", "10000", "request.timeout.ms", "5000")); }
Admin token(DelegationToken t) { return Admin.create(Map.of("bootstrap.servers", B, "security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "SCRAM-SHA-512", "sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"" + t.tokenInfo().tokenId() + "\" password=\"" + t.hmacAsBase64String() + "\" tokenauth=\"true\";", "default.api.timeout.ms", "10000", "request.timeout.ms", "5000")); }
String err(Exception e) { Throwable c = e; while (c.getCause() != null) c = c.getCause(); return c.getClass().getSimpleName(); }
var alice = plain("alice"); var bob = plain("bob"); var eve = plain("eve"); var admin = plain("admin");
var t = alice.createDelegationToken(new CreateDelegationTokenOptions().renewers(List.of(new KafkaPrincipal("User", "bob"))).maxLifetimeMs(-1)).delegationToken().get();
var i = t.tokenInfo();
System.out.println("1 owner=" + i.owner() + " requester=" + i.tokenRequester() + " renewers=" + i.renewers() + " expiry=" + (i.expiryTimestamp() - i.issueTimestamp()) + " max=" + (i.maxTimestamp() - i.issueTimestamp()) + " idlen=" + i.tokenId().length() + " hmaclen=" + t.hmac().length);
var t2 = admin.createDelegationToken(new CreateDelegationTokenOptions().owner(new KafkaPrincipal("User", "alice"))).delegationToken().get();
System.out.println("2 owner=" + t2.tokenInfo().owner() + " requester=" + t2.tokenInfo().tokenRequester());
try { var t3 = alice.createDelegationToken(new CreateDelegationTokenOptions().renewers(List.of(new KafkaPrincipal("Group", "x")))).delegationToken().get(); System.out.println("3 created " + t3.tokenInfo().renewers()); } catch (Exception e) { System.out.println("3 " + err(e)); }
System.out.println("4 eve all=" + eve.describeDelegationToken().delegationTokens().get().size());
System.out.println("5 alice owners[bob]=" + alice.describeDelegationToken(new DescribeDelegationTokenOptions().owners(List.of(new KafkaPrincipal("User", "bob")))).delegationTokens().get().size());
System.out.println("6 alice owners[]=" + alice.describeDelegationToken(new DescribeDelegationTokenOptions().owners(List.of())).delegationTokens().get().size());
try { eve.renewDelegationToken(t.hmac()).expiryTimestamp().get(); System.out.println("7 renewed"); } catch (Exception e) { System.out.println("7 " + err(e)); }
long now = System.currentTimeMillis(); long exp = bob.renewDelegationToken(t.hmac(), new RenewDelegationTokenOptions().renewTimePeriodMs(5000)).expiryTimestamp().get(); System.out.println("8 bob renew ~" + Math.round((exp - now) / 1000.0) + "s");
try { bob.renewDelegationToken("nope".getBytes()).expiryTimestamp().get(); System.out.println("9 renewed"); } catch (Exception e) { System.out.println("9 " + err(e)); }
var ta = token(t); try { System.out.println("10 token lists topics: " + (ta.listTopics().names().get() != null)); } catch (Exception e) { System.out.println("10 " + err(e)); }
try { ta.createDelegationToken().delegationToken().get(); System.out.println("11 created"); } catch (Exception e) { System.out.println("11 " + err(e)); }
try { ta.describeDelegationToken().delegationTokens().get(); System.out.println("11b described"); } catch (Exception e) { System.out.println("11b " + err(e)); }
ta.close();
now = System.currentTimeMillis(); exp = alice.expireDelegationToken(t.hmac(), new ExpireDelegationTokenOptions().expiryTimePeriodMs(0)).expiryTimestamp().get(); System.out.println("12 expire(0) ~" + (exp - now < 2000));
Thread.sleep(50);
try { alice.renewDelegationToken(t.hmac()).expiryTimestamp().get(); System.out.println("13 renewed"); } catch (Exception e) { System.out.println("13 " + err(e)); }
try { alice.expireDelegationToken(t.hmac(), new ExpireDelegationTokenOptions().expiryTimePeriodMs(1000)).expiryTimestamp().get(); System.out.println("13b expired"); } catch (Exception e) { System.out.println("13b " + err(e)); }
var tb = token(t); try { tb.listTopics().names().get(); System.out.println("14 expired token still authenticates"); } catch (Exception e) { System.out.println("14 " + err(e)); } tb.close();
exp = alice.expireDelegationToken(t.hmac(), new ExpireDelegationTokenOptions().expiryTimePeriodMs(-1)).expiryTimestamp().get(); System.out.println("15 removed; alice sees " + alice.describeDelegationToken().delegationTokens().get().size());
try { eve.expireDelegationToken(t2.hmac(), new ExpireDelegationTokenOptions().expiryTimePeriodMs(-1)).expiryTimestamp().get(); System.out.println("16 eve expired alice's"); } catch (Exception e) { System.out.println("16 " + err(e)); }
alice.close(); bob.close(); eve.close(); admin.close();
/exit
