/*
 * Empty: Footprint.ino's Serial loop without a model, the baseline `kilobit bench export`
 * measures a model against.
 */
static uint8_t in[2];
static uint16_t got;

void setup()
{
    Serial.begin(115200);
}

void loop()
{
    if (Serial.available() == 0)
        return;
    in[got++] = (uint8_t)Serial.read();
    if (got < sizeof in)
        return;
    got = 0;
    Serial.write((uint8_t)(in[0] + in[1]));
}
